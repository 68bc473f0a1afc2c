// The tree every run and every replay starts from, made at the origin by the three
// users: files and folders of different owners and modes (so permission checks
// and ACCESS answers differ between users), a 5,000-byte file, a private folder,
// symbolic links, and a hard link across folders (T/a is also T/sub/c/f).
#pragma once

#include <cstdint>
#include <vector>

#include "tests/difftest/step.h"

namespace difftest {

/// Steps with ids from 2 (0 and 1 are T and T/sub), marked `setup`.
std::vector<Step> starting_tree();

}  // namespace difftest
