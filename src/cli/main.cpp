#include "cli/command.hpp"

int main(int argc, char** argv) {
  return commcert::run_cli(argc, argv);
}
