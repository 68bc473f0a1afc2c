// The configuration loader (config/load_config.cpp): any text, TOML or not, is
// either accepted or refused with config::ConfigError (which names the line or
// key); no other exception, no crash, no hang.
//
// Input: the text of a configuration file.
#include <cstddef>
#include <cstdint>
#include <string>

#include "config/config.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    (void)nfsgw::config::parse_config(text, "fuzz.toml");
  } catch (const nfsgw::config::ConfigError&) {
    // refused, with a message: what an operator gets
  }
  // Anything else escapes, and libFuzzer reports it as a crash.
  return 0;
}
