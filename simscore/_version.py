"""The single version string of the simscore distribution."""

__version__ = "0.1.0"
