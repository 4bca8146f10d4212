// One row's block of a K-quant matrix into / out of its group's Panels16 codes
// and headers (layout: kernels/cpu/panel_k_layout.h), and the code-byte
// writer both packers share. Used by panel_pack.cpp and panel_pack_k.cpp.
#pragma once
#include <cstdint>

#include "tensor/dtype.h"

namespace db::kernels {

// Writes row r's n (16 or 32) code bytes of a 32-element chunk: bytes[k] to
// chunk + panel_code_offset(r, k), in runs of 4.
void put_chunk_codes(uint8_t* chunk, int r, const uint8_t* bytes, int n);

// Writes row r's part of the GGUF block into its group's codes (row r's bytes
// only: the other rows' are left as they are) and its header fields.
void pack_block_k(DType t, const uint8_t* block, int r, uint8_t* codes, uint8_t* header);
// Writes row r's GGUF block (block_bytes(t) bytes) from codes and headers.
void unpack_block_k(DType t, const uint8_t* codes, const uint8_t* header, int r, uint8_t* block);

}  // namespace db::kernels
