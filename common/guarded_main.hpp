#pragma once

// One place for what every reflectd executable's main() does with an exception that its own
// error handling did not turn into an exit status.

#include <exception>
#include <iostream>

namespace reflectd {

/// Returns `run(argc, argv)`. An exception escaping it (an allocation failure, a logging sink
/// that cannot be created) is printed to stderr as "<program>: <what>" and gives exit status
/// 1 instead of std::terminate. Call it from main() only.
inline int guarded_main(const char* program, int (*run)(int, char**), int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& error) {
    std::cerr << program << ": " << error.what() << '\n';
  } catch (...) {
    std::cerr << program << ": unknown error\n";
  }
  return 1;
}

}  // namespace reflectd
