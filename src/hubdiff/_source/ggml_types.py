"""ggml's tensor types: elements a block and bytes a block, so a tensor's bytes are exact.

Origin: ggml's own type table (``type_traits`` in ``ggml/src/ggml.c``: ``blck_size`` and
``sizeof(block_*)`` of the structs in ``ggml/src/ggml-common.h``) as vendored by llama-cpp-python 0.3.36
(PyPI sdist, ``vendor/llama.cpp``): the sizes below were printed by a C program compiled against those
headers (``sizeof`` of each block struct, with its ``QK*`` constant). The tests check this table against gguf-py's ``GGML_QUANT_SIZES`` for every
type gguf-py knows. Ids that ggml retired (4, 5: Q4_2/Q4_3; 31-33 and 36-38: the repacked Q4_0 and
IQ4_NL layouts, which are never written to files) are unknown types here, as ggml's table gives them
no size.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GGMLType:
    id: int
    name: str
    block_size: int  # elements a block
    type_size: int  # bytes a block

    @property
    def bits_per_weight(self) -> float:
        return self.type_size * 8 / self.block_size

    def nbytes(self, elements: int) -> int:
        """Bytes of ``elements`` values; a row is whole blocks (the parser checks it), so exact."""
        return elements // self.block_size * self.type_size


_TABLE = (
    # id, name, elements a block, bytes a block (the block struct, ggml-common.h)
    (0, "F32", 1, 4),
    (1, "F16", 1, 2),
    (2, "Q4_0", 32, 18),  # half d; 16 bytes of nibbles
    (3, "Q4_1", 32, 20),  # half d, m; 16
    (6, "Q5_0", 32, 22),  # half d; 4 bytes of high bits; 16
    (7, "Q5_1", 32, 24),  # half d, m; 4; 16
    (8, "Q8_0", 32, 34),  # half d; 32 int8
    (9, "Q8_1", 32, 36),  # half d, s; 32 int8
    (10, "Q2_K", 256, 84),  # 16 scales; 64 quants; half d, dmin
    (11, "Q3_K", 256, 110),  # 32 hmask; 64 quants; 12 scales; half d
    (12, "Q4_K", 256, 144),  # half d, dmin; 12 scales; 128 quants
    (13, "Q5_K", 256, 176),  # half d, dmin; 12; 32 high bits; 128
    (14, "Q6_K", 256, 210),  # 128 low; 64 high; 16 scales; half d
    (15, "Q8_K", 256, 292),  # float d; 256 int8; 16 int16 block sums
    (16, "IQ2_XXS", 256, 66),
    (17, "IQ2_XS", 256, 74),
    (18, "IQ3_XXS", 256, 98),
    (19, "IQ1_S", 256, 50),
    (20, "IQ4_NL", 32, 18),
    (21, "IQ3_S", 256, 110),
    (22, "IQ2_S", 256, 82),
    (23, "IQ4_XS", 256, 136),
    (24, "I8", 1, 1),
    (25, "I16", 1, 2),
    (26, "I32", 1, 4),
    (27, "I64", 1, 8),
    (28, "F64", 1, 8),
    (29, "IQ1_M", 256, 56),
    (30, "BF16", 1, 2),
    (34, "TQ1_0", 256, 54),
    (35, "TQ2_0", 256, 66),
    (39, "MXFP4", 32, 17),  # e8m0 scale; 16 bytes of e2m1 pairs
    (40, "NVFP4", 64, 36),  # 4 e4m3 scales (one per 16); 32 bytes of e2m1 pairs
    (41, "Q1_0", 128, 18),  # half d; 16 bytes of sign bits
    (42, "Q2_0", 64, 18),  # half d; 16 bytes of 2-bit quants
)

GGML_TYPES: dict[int, GGMLType] = {i: GGMLType(i, name, block, size) for i, name, block, size in _TABLE}
BY_NAME: dict[str, GGMLType] = {t.name: t for t in GGML_TYPES.values()}
