# Tests that run under mpirun (label mpi). Open MPI's mpirun refuses to run as root
# without OMPI_ALLOW_RUN_AS_ROOT (and its confirmation), and more ranks than cores
# without --oversubscribe; --bind-to none lets oversubscribed ranks share the cores
# instead of queueing on one. Without MPI in the build, or without mpirun, each test
# is still registered, and skips with the reason in its output. Included by each
# directory that adds such tests (it only sets a variable and defines functions).

set(DB_MPI_TEST_ENV "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")

# Why the MPI tests cannot run in this build, in `out` ("" when they can).
function(db_mpi_skip_reason out)
  if(NOT DB_HAVE_MPI)
    set(${out} "this build has no MPI (configured with DB_MPI=OFF, or MPI was not found)" PARENT_SCOPE)
  elseif(NOT MPIEXEC_EXECUTABLE)
    set(${out} "mpirun was not found (install openmpi-bin)" PARENT_SCOPE)
  else()
    set(${out} "" PARENT_SCOPE)
  endif()
endfunction()

# db_add_mpi_skip(NAME REASON): a test that prints "SKIPPED: REASON" and reports skipped.
function(db_add_mpi_skip name reason)
  add_test(NAME ${name} COMMAND sh -c "echo 'SKIPPED: ${reason}'; exit 77")
  set_tests_properties(${name} PROPERTIES LABELS mpi SKIP_RETURN_CODE 77)
endfunction()

# db_add_mpi_test(NAME NP n [TIMEOUT s] COMMAND cmd args...): `mpirun -np n cmd args...`.
# It takes both cores of the test run (PROCESSORS 2): its ranks already share them.
function(db_add_mpi_test name)
  cmake_parse_arguments(T "" "NP;TIMEOUT" "COMMAND" ${ARGN})
  db_mpi_skip_reason(reason)
  if(reason)
    db_add_mpi_skip(${name} "${reason}")
    return()
  endif()
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 60)
  endif()
  add_test(NAME ${name}
           COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${T_NP} --oversubscribe --bind-to none ${T_COMMAND})
  set_tests_properties(${name} PROPERTIES LABELS mpi TIMEOUT ${T_TIMEOUT} PROCESSORS 2
                       ENVIRONMENT "${DB_MPI_TEST_ENV}")
endfunction()
