#include "server/shutdown_signal.h"

#include <pthread.h>
#include <signal.h>

namespace db::server {

namespace {

sigset_t shutdown_set() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

}  // namespace

void block_shutdown_signals() {
  const sigset_t set = shutdown_set();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

int wait_for_shutdown_signal() {
  const sigset_t set = shutdown_set();
  int sig = 0;
  while (sigwait(&set, &sig) != 0) {
  }
  return sig;
}

}  // namespace db::server
