"""Raw atom and bond properties read from RDKit's binary molecule pickle (``Mol.ToBinary()``) by one
compiled (Numba) pass over all molecules of a chunk.

Why not RDKit's Python API: reading OGB's 9 atom and 3 bond features through it costs ~14 getter
calls per atom (~1.3 µs each), more than ``MolFromSmiles`` itself, which is the floor of any
SMILES featurization. ``ToBinary`` is one C++ call per molecule (~0.2 ms on a Peptides-func
molecule against ~0.9 ms for the parse) and its bytes hold every value the features need, as
``RDKit/Code/GraphMol/MolPickler.cpp`` (pickle version 16) writes them:

- header: ``int32`` 0xDEADBEEF, ``int32`` 0, major, minor, patch; ``int32`` atoms, bonds; a flag byte;
  the tag ``BEGINATOM``. Atom indices are ``uint8`` up to 255 atoms and bonds, ``int32`` above.
- per atom: ``uint8`` atomic number, a flag byte (aromatic ``1<<6``, no implicit Hs ``1<<5``, query
  ``1<<4``, atom map ``1<<3``, dummy label ``1<<2``, monomer info ``1<<1``, coordinates ``1<<7``),
  ``int32`` property flags, then only the non-default values: formal charge, chiral tag,
  hybridization (default SP3), explicit Hs, explicit valence, implicit valence, radical electrons
  (one byte each), isotope (``uint32``); then the atom map number and dummy label if flagged.
- tag ``BEGINBOND``; per bond: begin, end (atom indices), a flag byte (aromatic ``1<<6``,
  conjugated ``1<<5``, query ``1<<4``, non-single ``1<<3``, direction ``1<<2``, stereo ``1<<1``,
  end points ``1``), then the bond type, direction, and stereo with its stereo atoms if flagged.
- a ring tag (``BEGINSSSR`` 20, ``BEGINSYMMSSSR`` 66, ``BEGINFASTFIND`` 67,
  ``BEGINFINDOTHERORUNKNOWN`` 68), ``uint32`` rings, per ring its size and atom indices.

From these, RDKit's getters are: ``GetTotalNumHs() = explicit Hs + (0 if no-implicit else implicit
valence)``, ``GetTotalDegree() = bonds + GetTotalNumHs()``, ``IsInRing() =`` the atom lies on a ring
of the ring info. A molecule whose pickle holds anything else (queries, coordinates, monomer info,
a ring info not yet computed, another pickle version, big-endian bytes) is reported as not read
(status != OK), and :mod:`graphbench.data.sources.molecules` reads its chunk through RDKit's
getters instead. ``tests/data/sources/test_mol_pickle.py`` checks every value against those
getters, and that the real Peptides-func molecules all take this path with the pinned RDKit.
"""

from __future__ import annotations

import numba
import numpy as np

#: the pickle version (major) whose layout this module reads
PICKLE_MAJOR = 16
#: columns of the atom array, raw RDKit values (enums as their integer codes)
ATOM_COLUMNS = (
    "atomic_num",
    "chiral_tag",
    "total_degree",
    "formal_charge",
    "total_num_hs",
    "num_radical_electrons",
    "hybridization",
    "is_aromatic",
    "is_in_ring",
)
#: columns of the bond array (its atoms come apart, as ``ends``)
BOND_COLUMNS = ("bond_type", "stereo", "is_conjugated")

OK, UNKNOWN_VERSION, UNSUPPORTED_ATOM, UNSUPPORTED_BOND, NO_RING_INFO, MALFORMED = range(6)

_BEGINATOM, _BEGINBOND, _ATOM_MAPNUMBER, _ATOM_DUMMYLABEL = 1, 11, 24, 44
_RING_TAGS = (20, 66, 67, 68)
_SP3, _SINGLE = 4, 1
_HEADER = 29  # five int32, atom and bond counts, the flag byte


@numba.njit(cache=True, nogil=True)
def _int32(buf, p):
    v = np.int64(buf[p]) | (np.int64(buf[p + 1]) << 8) | (np.int64(buf[p + 2]) << 16) | (np.int64(buf[p + 3]) << 24)
    return v - (np.int64(1) << 32) if v >= (np.int64(1) << 31) else v


@numba.njit(cache=True, nogil=True)
def _int8(buf, p):
    v = np.int64(buf[p])
    return v - 256 if v >= 128 else v


@numba.njit(cache=True, nogil=True)
def _field(buf, p, present, default, signed):
    """An optional one-byte field at ``p``: (its value, the next position), or (``default``, ``p``)."""
    if not present:
        return np.int64(default), p
    return (_int8(buf, p) if signed else np.int64(buf[p])), p + 1


@numba.njit(cache=True, nogil=True)
def _index(buf, p, wide):
    return _int32(buf, p) if wide else np.int64(buf[p])


@numba.njit(cache=True, nogil=True)
def _read_one(buf, p, end, atoms, ends, bonds, a0, b0):
    """Parse the pickle ``buf[p:end]`` into ``atoms[a0:]``, ``ends[b0:]`` and ``bonds[b0:]``; returns a status."""
    if end - p < _HEADER + 1 or _int32(buf, p) != -559038737 or _int32(buf, p + 4) != 0:
        return MALFORMED
    if _int32(buf, p + 8) != PICKLE_MAJOR:
        return UNKNOWN_VERSION
    n_atoms, n_bonds = _int32(buf, p + 20), _int32(buf, p + 24)
    wide = n_atoms > 255 or n_bonds > 255
    width = 4 if wide else 1
    p += _HEADER
    if buf[p] != _BEGINATOM:
        return MALFORMED
    p += 1
    for a in range(a0, a0 + n_atoms):
        if p + 6 > end:
            return MALFORMED
        atomic_num, flags = np.int64(buf[p]), buf[p + 1]
        if flags & 0b10010010:  # coordinates, query, monomer info
            return UNSUPPORTED_ATOM
        props = _int32(buf, p + 2)
        if props & 1 or props >> 9:  # a mass delta (pickles before version 7), unknown fields
            return UNSUPPORTED_ATOM
        p += 6
        size = 4 if props & 256 else 0
        for bit in range(1, 8):
            size += (props >> bit) & 1
        if p + size > end:
            return MALFORMED
        charge, p = _field(buf, p, props & 2, 0, True)
        chiral, p = _field(buf, p, props & 4, 0, False)
        hybridization, p = _field(buf, p, props & 8, _SP3, False)
        explicit_hs, p = _field(buf, p, props & 16, 0, True)
        _, p = _field(buf, p, props & 32, 0, False)  # explicit valence
        implicit, p = _field(buf, p, props & 64, 0, True)
        radicals, p = _field(buf, p, props & 128, 0, False)
        if props & 256:  # isotope
            p += 4
        if flags & 8:  # atom map number: tag, a byte, and an int32 when the byte is not 0..127
            if p + 2 > end or buf[p] != _ATOM_MAPNUMBER:
                return MALFORMED
            p += 6 if buf[p + 1] > 127 else 2
        if flags & 4:  # dummy label: tag, uint32 length, the characters
            if p + 5 > end or buf[p] != _ATOM_DUMMYLABEL:
                return MALFORMED
            p += 5 + _int32(buf, p + 1)
        num_hs = explicit_hs + (0 if flags & 32 else implicit)
        atoms[a, 0] = atomic_num
        atoms[a, 1] = chiral
        atoms[a, 2] = num_hs  # the degree is added below, from the bonds
        atoms[a, 3] = charge
        atoms[a, 4] = num_hs
        atoms[a, 5] = radicals
        atoms[a, 6] = hybridization
        atoms[a, 7] = 1 if flags & 64 else 0
        atoms[a, 8] = 0
    if p >= end or buf[p] != _BEGINBOND:
        return MALFORMED
    p += 1
    for b in range(b0, b0 + n_bonds):
        if p + 2 * width + 1 > end:
            return MALFORMED
        begin, stop = _index(buf, p, wide), _index(buf, p + width, wide)
        p += 2 * width
        flags = buf[p]
        if flags & 0b10001:  # query, end points
            return UNSUPPORTED_BOND
        p += 1
        if not (0 <= begin < n_atoms and 0 <= stop < n_atoms) or p + ((flags >> 3) & 1) + ((flags >> 2) & 1) > end:
            return MALFORMED
        bond_type, stereo = _SINGLE, 0
        if flags & 8:
            bond_type = np.int64(buf[p])
            p += 1
        if flags & 4:  # direction
            p += 1
        if flags & 2:  # stereo, then its stereo atoms
            if p + 2 > end:
                return MALFORMED
            stereo = np.int64(buf[p])
            p += 2 + width * np.int64(buf[p + 1])
        ends[b, 0] = begin
        ends[b, 1] = stop
        bonds[b, 0] = bond_type
        bonds[b, 1] = stereo
        bonds[b, 2] = 1 if flags & 32 else 0
        atoms[a0 + begin, 2] += 1
        atoms[a0 + stop, 2] += 1
    if p >= end:
        return MALFORMED
    tag = buf[p]
    if tag != _RING_TAGS[0] and tag != _RING_TAGS[1] and tag != _RING_TAGS[2] and tag != _RING_TAGS[3]:
        return NO_RING_INFO
    if p + 5 > end:
        return MALFORMED
    n_rings = _int32(buf, p + 1)
    p += 5
    for _ in range(n_rings):
        if p + width > end:
            return MALFORMED
        size = _index(buf, p, wide)
        p += width
        if p + size * width > end:
            return MALFORMED
        for _j in range(size):
            atom = _index(buf, p, wide)
            if not 0 <= atom < n_atoms:
                return MALFORMED
            atoms[a0 + atom, 8] = 1
            p += width
    return OK


@numba.njit(cache=True, nogil=True)
def read_pickles(buf, starts):
    """Raw properties of the molecules pickled at ``buf[starts[i]:starts[i + 1]]``.

    Returns ``atoms`` (int16 [total atoms, 9], :data:`ATOM_COLUMNS`), ``ends`` (int64 [total bonds,
    2]: each bond's atoms, indices within their molecule), ``bonds`` (int16 [total bonds, 3],
    :data:`BOND_COLUMNS`), the atom and bond counts per molecule, and a status per molecule
    (:data:`OK` when every value was read; the rows of any other molecule are left undefined).
    Compact dtypes: on a machine where fresh memory is slow to fault in, the bytes written are
    much of the cost.
    """
    n = starts.size - 1
    num_atoms = np.zeros(n, np.int64)
    num_bonds = np.zeros(n, np.int64)
    for i in range(n):
        if starts[i + 1] - starts[i] >= _HEADER:
            num_atoms[i] = max(_int32(buf, starts[i] + 20), 0)
            num_bonds[i] = max(_int32(buf, starts[i] + 24), 0)
    atoms = np.zeros((num_atoms.sum(), len(ATOM_COLUMNS)), np.int16)
    ends = np.zeros((num_bonds.sum(), 2), np.int64)
    bonds = np.zeros((num_bonds.sum(), len(BOND_COLUMNS)), np.int16)
    status = np.empty(n, np.int64)
    a0 = b0 = 0
    for i in range(n):
        status[i] = _read_one(buf, starts[i], starts[i + 1], atoms, ends, bonds, a0, b0)
        a0 += num_atoms[i]
        b0 += num_bonds[i]
    return atoms, ends, bonds, num_atoms, num_bonds, status


@numba.njit(cache=True, nogil=True)
def map_codes(codes, tables, low, outside):
    """In place, ``codes[i, c] = tables[c, codes[i, c] - low]``, or ``outside[c]`` for a code
    beyond the table: every column of integer codes through its own look-up table in one pass.
    A -1 from a table (a missing value) stops the pass before it is written; returns its flat
    position then, else -1."""
    n, cols = codes.shape
    width = tables.shape[1]
    for i in range(n):
        for c in range(cols):
            j = codes[i, c] - low
            index = tables[c, j] if 0 <= j < width else outside[c]
            if index < 0:
                return i * cols + c
            codes[i, c] = index
    return -1
