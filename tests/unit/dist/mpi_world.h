// The world the MPI tests share: opened once by mpi_test_main.cpp.
#pragma once
#include "dist/world.h"

namespace db::dist::test {

Communicator& world();

}  // namespace db::dist::test
