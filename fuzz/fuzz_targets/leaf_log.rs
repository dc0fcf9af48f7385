//! Search logs of `book audit` and `book fix` (`--resume`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| thorbook::fuzz::on_this_thread(|| thorbook::fuzz::leaf_log(data)));
