//! Checking a book after it is made (crate-private; `thorbook book audit|fix`, whose
//! JSON reports docs/books.md documents): an audit of its values against deeper
//! searches on the lines it plays, and a fix that searches again the leaves behind
//! contradicted values, each with a log that lets such long runs resume.

pub(crate) mod audit;
pub(crate) mod fix;
