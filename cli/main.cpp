// The `orchestrate` executable.
#include "cli/app.h"

int main(int argc, char** argv) {
  return orch::run_app(argc, argv);
}
