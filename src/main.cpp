#include "cli/commands.hpp"

int main(int argc, char** argv) { return bootstrap::cli::run_cli(argc, argv); }
