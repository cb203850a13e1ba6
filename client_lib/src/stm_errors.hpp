// The one table from tactus's ErrorCode to STM's error codes, for STM's C API (stm.cpp) and its
// schedule manager API (manager.cpp): a failure reads the same through either.
#pragma once

#include "tactus/core/result.hpp"
#include "tactus/stm.h"

namespace tactus::client {

/// STM's code for an error of `code` (STM_ERROR_GENERIC where STM has no closer one).
inline stmErrorCode_t stmErrorOf(ErrorCode code) {
  switch (code) {
    case ErrorCode::kBadParameter: return STM_ERROR_BAD_PARAMETER;
    case ErrorCode::kNotFound: return STM_ERROR_NOT_FOUND;
    case ErrorCode::kAlreadyExists: return STM_ERROR_BAD_VALUE;
    case ErrorCode::kInvalidState: return STM_ERROR_INVALID_STATE;
    case ErrorCode::kTimeout: return STM_ERROR_TIMEOUT;
    case ErrorCode::kValidation: return STM_ERROR_BAD_VALUE;
    default: return STM_ERROR_GENERIC;
  }
}

}  // namespace tactus::client
