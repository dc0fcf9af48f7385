//! A book file as the engine and `book` commands meet it: opened in constant time
//! (header checks only), then probed, walked and queried without `verify` (what the
//! engine does with `--book FILE`), and when `verify` passes, exported to the three
//! interchange formats. The first byte says whether to repair the two CRC-32s first,
//! so that mutations reach the records instead of stopping at a checksum.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| thorbook::fuzz::on_this_thread(|| thorbook::fuzz::book_open(data)));
