// SIGINT and SIGTERM (ctest's timeout, an operator's ^C) end the run between two
// steps, so that nfsgw is stopped and the scratch space removed as at a normal end:
// a tester killed outright would leave nfsgw on its port, and the next run would
// talk to that one.
#pragma once

namespace difftest {

void catch_interrupts();
bool interrupted();

}  // namespace difftest
