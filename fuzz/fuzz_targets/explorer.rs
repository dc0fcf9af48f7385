//! The explorer's request handling (`thorbook explore`): any method and request target
//! against the bundled archives and book. Engine scores are turned off here (they are
//! fuzzed through GTP and NBoard); a `level` parameter is still parsed and refused.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| thorbook::fuzz::on_this_thread(|| thorbook::fuzz::explorer(data)));
