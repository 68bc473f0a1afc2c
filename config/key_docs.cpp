#include "config/key_docs.h"

#include <stdexcept>

#include "config/key.h"

namespace nfsgw::config {
namespace {

const char* reload_text(Reload r) {
  switch (r) {
    case Reload::Live: return "at once";
    case Reload::Restart: return "restart";
    case Reload::Identity: return "a new export";
  }
  return "";
}

template <typename S>
std::string table(const SectionKeys<S>& section) {
  std::string out =
      "| key | type | default | allowed | `nfsgw reload` | meaning |\n"
      "|---|---|---|---|---|---|\n";
  const S defaults{};
  for (const auto& k : section.keys) {
    const std::string default_text = k.default_text.empty() ? "`" + k.show(defaults) + "`" : k.default_text;
    out += "| `" + k.name + "` | " + k.type + " | " + default_text + " | " + k.allowed + " | " +
           reload_text(k.reload) + " | " + k.meaning + " |\n";
  }
  return out;
}

}  // namespace

std::string key_table_markdown(const std::string& section) {
  if (section == "server") return table(server_keys());
  if (section == "cache") return table(cache_keys());
  if (section == "export") return table(export_keys());
  throw std::invalid_argument("no configuration section " + section);
}

}  // namespace nfsgw::config
