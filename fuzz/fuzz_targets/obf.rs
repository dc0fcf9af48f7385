//! FFO/Edax `.obf` problem files (`solve FILE`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| thorbook::fuzz::on_this_thread(|| thorbook::fuzz::obf(data)));
