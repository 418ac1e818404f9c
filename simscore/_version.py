"""The single version string of the simscore distribution."""

__version__ = "0.2.0"
