//! A WTHOR file (games, players or tournaments, chosen by the first byte) loaded the
//! way `thor` commands load archives: parsed, every game validated and replayed, the
//! position index built and queried; then written back and read again.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| thorbook::fuzz::on_this_thread(|| thorbook::fuzz::thor_file(data)));
