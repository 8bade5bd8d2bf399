//! Renderers: the host's answers as tables, text and HTML (the commands in `commands`
//! choose which and print it).

pub mod explain;
pub mod matrix;
pub mod report;
pub mod tables;
