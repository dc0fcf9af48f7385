//! A plan's positions file (`nodes.bin`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| thorbook::fuzz::on_this_thread(|| thorbook::fuzz::nodes_file(data)));
