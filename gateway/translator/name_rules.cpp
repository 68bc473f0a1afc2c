#include "gateway/translator/name_rules.h"

namespace nfsgw {

nfs3::Status check_name(NameUse use, std::string_view name) {
  using nfs3::Status;
  if (name.size() > kMaxNameBytes) return Status::NameTooLong;
  if (name.find('/') != std::string_view::npos || name.find('\0') != std::string_view::npos)
    return Status::Inval;
  const bool dot = name == "." || name == "..";
  if (!name.empty() && !dot) return Status::Ok;
  switch (use) {
    case NameUse::Lookup: return name.empty() ? Status::Acces : Status::Ok;
    case NameUse::Create: return name.empty() ? Status::Perm : Status::Exist;
    case NameUse::Remove: return Status::Acces;
    case NameUse::Rename: return Status::Perm;
  }
  return Status::Inval;
}

}  // namespace nfsgw
