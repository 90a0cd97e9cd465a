// The one Catch2 main for every unit test in the tree (files named *_test.cc beside the code).
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
