// The body lines of a `warm` reply on the admin socket (admin_protocol.h), written
// by the gateway as the walk goes and read by `nfsgw warm`:
//
//   progress entries=N dirs=N bytes=N data_total=N failed=N paths_total=N paths_done=N discovering=N
//   failed <percent-encoded path> <why, to the end of the line>
//   summary <the progress fields> origin_calls=N blocks_fetched=N bytes_fetched=N ms=N cancelled=0|1
//
// then the status line. Fields are `key=decimal`; a reader ignores keys it does
// not know, so fields can be added without a new protocol version.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "gateway/admin/warm_progress.h"

namespace nfsgw::warm {

/// One line each, '\n' included.
std::string format_progress(const WarmFigures& f);
std::string format_failure(const WarmFailure& f);
std::string format_summary(const WarmOutcome& o);

/// nullopt when `line` (without '\n') is not such a line or a field is malformed.
std::optional<WarmFigures> parse_progress(std::string_view line);
std::optional<WarmFailure> parse_failure(std::string_view line);
std::optional<WarmOutcome> parse_summary(std::string_view line);

}  // namespace nfsgw::warm
