// SIGINT / SIGTERM delivered to one waiting thread instead of an async handler.
#pragma once

namespace db::server {

// Blocks SIGINT and SIGTERM in the calling thread; threads started afterwards inherit
// the mask, so call it before starting any. Then wait_for_shutdown_signal() receives them.
void block_shutdown_signals();
// Waits for SIGINT or SIGTERM; returns its number.
int wait_for_shutdown_signal();

}  // namespace db::server
