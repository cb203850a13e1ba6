// The one table from tactus's ErrorCode to STM's error codes, for STM's C API (stm.cpp) and its
// schedule manager API (manager.cpp): a failure reads the same through either. The two once kept
// their own switches, and the manager's mapped kValidation to STM_ERROR_GENERIC where the C API
// said STM_ERROR_BAD_VALUE (issue 42).
#pragma once

#include <cstddef>

#include "tactus/core/result.hpp"
#include "tactus/stm.h"

namespace tactus::client {

/// One row of kStmErrorTable: an ErrorCode and STM's code for it.
struct StmErrorEntry {
  ErrorCode code;
  stmErrorCode_t stm;
};

/// Every ErrorCode, in the enum's order, with STM's code for it (STM_ERROR_GENERIC where STM has
/// no closer one). A code added to ErrorCode without a row here fails the static_assert below.
inline constexpr StmErrorEntry kStmErrorTable[] = {
    {ErrorCode::kBadParameter, STM_ERROR_BAD_PARAMETER},
    {ErrorCode::kParse, STM_ERROR_GENERIC},
    {ErrorCode::kValidation, STM_ERROR_BAD_VALUE},
    {ErrorCode::kVerification, STM_ERROR_GENERIC},
    {ErrorCode::kIncompatible, STM_ERROR_GENERIC},
    {ErrorCode::kNotFound, STM_ERROR_NOT_FOUND},
    {ErrorCode::kAlreadyExists, STM_ERROR_BAD_VALUE},
    {ErrorCode::kInvalidState, STM_ERROR_INVALID_STATE},
    {ErrorCode::kTimeout, STM_ERROR_TIMEOUT},
    {ErrorCode::kIo, STM_ERROR_GENERIC},
    {ErrorCode::kInfeasible, STM_ERROR_GENERIC},
    {ErrorCode::kPeerDied, STM_ERROR_GENERIC},
    {ErrorCode::kInternal, STM_ERROR_GENERIC},
};

/// Whether kStmErrorTable has one row per ErrorCode, row k for the code of value k (kInternal is
/// the enum's last code).
constexpr bool stmErrorTableCoversEveryCode() {
  constexpr std::size_t kCodes = static_cast<std::size_t>(ErrorCode::kInternal) + 1;
  if (std::size(kStmErrorTable) != kCodes) return false;
  for (std::size_t k = 0; k < kCodes; ++k)
    if (static_cast<std::size_t>(kStmErrorTable[k].code) != k) return false;
  return true;
}
static_assert(stmErrorTableCoversEveryCode(),
              "kStmErrorTable needs one row per ErrorCode, in the enum's order (result.hpp)");

/// STM's code for an error of `code`.
constexpr stmErrorCode_t stmErrorOf(ErrorCode code) {
  const auto k = static_cast<std::size_t>(code);
  return k < std::size(kStmErrorTable) ? kStmErrorTable[k].stm : STM_ERROR_GENERIC;
}

/// STM's code for an error of the C API (stm.cpp) and of the schedule manager API (manager.cpp):
/// two names for one table, so that a test can hold the two to each other.
constexpr stmErrorCode_t stmClientError(ErrorCode code) { return stmErrorOf(code); }
constexpr stmErrorCode_t stmManagerError(ErrorCode code) { return stmErrorOf(code); }

}  // namespace tactus::client
