// The cache of pre-packed model files behind `--pack` on run, serve, bench,
// generate and chat (and Python's LLM(pack=True)): the first load of a GGUF
// file writes its pre-packed copy (model/gguf_pack.h) for the running ISA level;
// every later load of the same file maps that copy and computes nothing per
// matrix.
//
// Where: $XDG_CACHE_HOME/deepbatch/packed when XDG_CACHE_HOME is an absolute
// path, else $HOME/.cache/deepbatch/packed, else ./deepbatch-cache/packed. A
// copy is named by the source's file name and a key of its size, modification
// time, a hash of its first MiB (the header and most metadata), the level and
// the panel layout version, so an edited or replaced source, another level or
// another layout gets a copy of its own. A copy is written to a temporary file
// and renamed into place, so a process never loads a half-written one. Old
// copies are not deleted: each is about the size of its source.
#pragma once
#include <string>

#include "util/cpu_features.h"
#include "util/thread_pool.h"

namespace db {

// The cache directory described above for these environment values (nullptr when unset).
std::string packed_cache_dir(const char* xdg_cache_home, const char* home);

// The pre-packed copy of the GGUF file `path` for `level`, written first when
// the cache has none (packing on `pool`). Throws db::Error naming the path when
// the source cannot be read or the copy cannot be written.
std::string packed_copy(const std::string& path, IsaLevel level, ThreadPool* pool);

}  // namespace db
