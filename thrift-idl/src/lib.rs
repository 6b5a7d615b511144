//! Generated Thrift code lands here (see regenerate.sh).
