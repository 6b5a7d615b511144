//! A failed 0.6 request as its client sees it: [`ThriftError`] in the exception field the 0.6
//! method declares for it (0.6's exceptions, at their 0.6 field ids, come from the generated
//! result structs), or a `TApplicationException` INTERNAL_ERROR with 0.6's words.

use thrift_idl::v06 as v;

use crate::thrift::error::ThriftError;

/// What 0.6's processor said for an exception its method does not declare.
pub fn internal_error_message(method: &str) -> String {
    format!("Internal error processing {method}")
}

/// One function per exception field name a 0.6 result struct may have; `None` when the error is
/// of another kind. Used by [`super::dispatch`]'s method table.
pub mod declared {
    use super::*;

    pub fn ire(e: &ThriftError) -> Option<v::InvalidRequestException> {
        match e {
            ThriftError::Invalid(why) => Some(v::InvalidRequestException::new(why.clone())),
            _ => None,
        }
    }

    pub fn nfe(e: &ThriftError) -> Option<v::NotFoundException> {
        matches!(e, ThriftError::NotFound).then(v::NotFoundException::new)
    }

    pub fn ue(e: &ThriftError) -> Option<v::UnavailableException> {
        matches!(e, ThriftError::Unavailable).then(v::UnavailableException::new)
    }

    /// 0.6's TimedOutException carries nothing (20.1.0 added acknowledged_by).
    pub fn te(e: &ThriftError) -> Option<v::TimedOutException> {
        matches!(e, ThriftError::TimedOut { .. }).then(v::TimedOutException::new)
    }

    pub fn authnx(e: &ThriftError) -> Option<v::AuthenticationException> {
        match e {
            ThriftError::Authentication(why) => Some(v::AuthenticationException::new(why.clone())),
            _ => None,
        }
    }

    pub fn authzx(e: &ThriftError) -> Option<v::AuthorizationException> {
        match e {
            ThriftError::Authorization(why) => Some(v::AuthorizationException::new(why.clone())),
            _ => None,
        }
    }
}
