//! `book import`: any bytes, recognised by content (Edax `book.dat`, Edax text,
//! Egaroucid `.egbk3`, thorbook text or binary). What imports is a valid book, and its
//! thorbook text export imports back to the same bytes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| thorbook::fuzz::on_this_thread(|| thorbook::fuzz::book_import(data)));
