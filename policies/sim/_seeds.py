"""The three generators of each simulated dialogue, seeded many dialogues at a time.

Dialogue ``i`` of a run seeded with ``seed`` draws from three generators: child ``k`` (0: the
user, 1: the policy's ``begin_dialogue`` hook, 2: the system's master-act mapping) is
``numpy.random.default_rng(SeedSequence(seed, spawn_key=(*stream, i, k)))``. numpy builds each
seed sequence and its generator's state in about 14 microseconds, which is 4 to 8 % of a
GP-SARSA training dialogue. :class:`DialogueGenerators` computes the same states for up to
:data:`CHUNK` dialogues at once, vectorised over ``i``, and gives each generator its state
directly: the same generators, the same draws, bit for bit, in about 2 microseconds each.

How (numpy's ``SeedSequence``, from M. E. O'Neill's ``seed_seq`` alternative): the entropy is
the run seed in 32-bit words (zero-padded to the pool size of 4 when there is a spawn key),
then the spawn key's words. The first four words are hashed into the pool and mixed all with
all; each further word is hashed and mixed into every pool word in turn; ``generate_state``
hashes the pool words out again. The hash constants advance with every hash, whatever the
data, so everything up to the dialogue's index depends only on ``seed`` and ``stream``: it is
done once, in Python integers; the index and the child are mixed in with uint32 arrays (their
products wrap around, as the C code's do). Indices of 2**32 or more take two words: those
dialogues, and runs of fewer than :data:`FEW` dialogues, use numpy's own path.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.random.bit_generator import ISpawnableSeedSequence

__all__ = ["CHUNK", "FEW", "DialogueGenerators"]

#: Dialogues whose generators are computed together (about 100 KB of states).
CHUNK = 1024
#: Below this many dialogues numpy's own path is faster than the vectorised one.
FEW = 16

_POOL = 4
_INIT_A, _MULT_A = 0x43B0D7E5, 0x931E8875
_INIT_B, _MULT_B = 0x8B51F9DD, 0x58F38DED
_MIX_L, _MIX_R = 0xCA01F9DD, 0x4973F715
_MASK = 0xFFFFFFFF


def _words(value: int) -> list[int]:
    """A non-negative integer as numpy's seed sequence reads it: 32-bit words, lowest first."""
    words = [] if value else [0]
    while value:
        words.append(value & _MASK)
        value >>= 32
    return words


def _hash_constants(start: int, multiplier: int, count: int) -> list[int]:
    """The constant each of ``count`` successive hashes multiplies by (it advances every hash)."""
    constants, h = [], start
    for _ in range(count):
        constants.append(h)
        h = (h * multiplier) & _MASK
    return constants


# Each works on Python ints and on uint32 arrays alike: every product is reduced to 32 bits
# before it meets another operand (an array's product wraps by itself; numpy would refuse a
# Python int beyond uint32 beside an array).
def _hashmix(value: Any, h: int, multiplier: int) -> Any:
    value = ((value ^ h) * ((h * multiplier) & _MASK)) & _MASK
    return value ^ (value >> 16)


def _mix(x: Any, y: Any) -> Any:
    result = (((_MIX_L * x) & _MASK) - ((_MIX_R * y) & _MASK)) & _MASK
    return result ^ (result >> 16)


class _Prefix:
    """The pool after every word but the index and the child, and the hash constants that follow."""

    def __init__(self, seed: int, stream: tuple[int, ...]) -> None:
        run = _words(seed)
        prefix = run + [0] * (_POOL - len(run)) + [w for key in stream for w in _words(key)]
        # hashes: 4 into the pool, 12 all with all, 4 per further word (the prefix's, the index, the child)
        constants = _hash_constants(_INIT_A, _MULT_A, _POOL + _POOL * (_POOL - 1) + _POOL * (len(prefix) - 2))
        hashes = iter(constants)
        pool = [_hashmix(prefix[i], next(hashes), _MULT_A) for i in range(_POOL)]
        for source in range(_POOL):
            for target in range(_POOL):
                if source != target:
                    pool[target] = _mix(pool[target], _hashmix(pool[source], next(hashes), _MULT_A))
        for word in prefix[_POOL:]:
            for target in range(_POOL):
                pool[target] = _mix(pool[target], _hashmix(word, next(hashes), _MULT_A))
        self.pool = pool
        self.index_hashes = [next(hashes) for _ in range(_POOL)]
        child_hashes = [next(hashes) for _ in range(_POOL)]
        # the child's word is one of 0, 1, 2: its four hashed values, per child
        self.child_values = np.array(
            [[_hashmix(child, h, _MULT_A) for h in child_hashes] for child in range(3)], dtype=np.uint32
        )
        self.state_hashes = _hash_constants(_INIT_B, _MULT_B, 2 * _POOL)

    def states(self, indices: np.ndarray) -> np.ndarray:
        """The PCG64 seeds (4 uint64 each) of the dialogues ``indices`` (< 2**32): shape (n, 3, 4)."""
        words = indices.astype(np.uint32)
        pool = [
            _mix(self.pool[target], _hashmix(words, h, _MULT_A))
            for target, h in enumerate(self.index_hashes)
        ]
        children = [_mix(pool[t][:, None], self.child_values[:, t]) for t in range(_POOL)]  # (n, 3) each
        out = np.empty((len(indices), 3, 2 * _POOL), dtype=np.uint32)
        for i, h in enumerate(self.state_hashes):
            out[:, :, i] = _hashmix(children[i % _POOL], h, _MULT_B)
        return out.astype("<u4").view("<u8").astype(np.uint64)


class _Seeded(ISpawnableSeedSequence):
    """``SeedSequence(entropy, spawn_key=spawn_key)`` whose PCG64 state is already known.

    A PCG64 asks its seed sequence for 4 uint64 words; those come from the vectorised
    computation. Everything else (``spawn``, other states, ``entropy``, ``spawn_key``, pickling)
    is the real seed sequence's, built the first time it is asked for.
    """

    __slots__ = ("_state", "_entropy", "_spawn_key", "_real")

    def __init__(self, state: np.ndarray, entropy: int, spawn_key: tuple[int, ...]) -> None:
        self._state = state
        self._entropy = entropy
        self._spawn_key = spawn_key
        self._real: np.random.SeedSequence | None = None

    @property
    def real(self) -> np.random.SeedSequence:
        if self._real is None:
            self._real = np.random.SeedSequence(self._entropy, spawn_key=self._spawn_key)
        return self._real

    def generate_state(self, n_words: int, dtype: Any = np.uint32) -> np.ndarray:
        if n_words == _POOL and dtype is np.uint64:
            return self._state.copy()
        return self.real.generate_state(n_words, dtype)

    def spawn(self, n_children: int) -> list[np.random.SeedSequence]:  # type: ignore[override]  # numpy's children
        return self.real.spawn(n_children)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.real, name)

    def __reduce__(self) -> Any:
        return self.real.__reduce__()

    def __repr__(self) -> str:
        return repr(self.real)


def _generator(seed_sequence: Any) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(seed_sequence))


class DialogueGenerators:
    """The generators of the dialogues ``[start, stop)`` of the user stream ``stream`` of run ``seed``.

    ``generators(i)`` returns dialogue ``i``'s (user, policy, system) generators, each equal to
    ``default_rng(SeedSequence(seed, spawn_key=(*stream, i, k)))`` for ``k`` 0, 1, 2. Asked in
    increasing order of ``i``, it computes them :data:`CHUNK` dialogues at a time.

    >>> g = DialogueGenerators(7, (), 0, 100).generators(42)[1]
    >>> g.random() == np.random.default_rng(np.random.SeedSequence(7, spawn_key=(42, 1))).random()
    True
    """

    def __init__(self, seed: int, stream: tuple[int, ...], start: int, stop: int) -> None:
        self._seed = seed
        self._stream = stream
        self._stop = stop
        self._prefix = _Prefix(seed, stream) if stop - start >= FEW else None
        self._first = 0
        self._states = np.empty((0, 3, _POOL), dtype=np.uint64)

    def generators(self, index: int) -> tuple[np.random.Generator, np.random.Generator, np.random.Generator]:
        key = (*self._stream, index)
        if self._prefix is None or index >= 2**32:
            return tuple(  # type: ignore[return-value]
                _generator(np.random.SeedSequence(self._seed, spawn_key=(*key, k))) for k in range(3)
            )
        row = index - self._first
        if not 0 <= row < len(self._states):
            self._first, row = index, 0
            last = min(self._stop, index + CHUNK, 2**32)
            self._states = self._prefix.states(np.arange(index, max(last, index + 1), dtype=np.uint64))
        states = self._states[row]
        return tuple(  # type: ignore[return-value]
            _generator(_Seeded(states[k], self._seed, (*key, k))) for k in range(3)
        )
