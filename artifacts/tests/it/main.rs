//! The artifacts crate's one integration-test binary (issue 33): the readers against real
//! and generated model files, one module per reader.

mod configs;
mod gguf;
mod safetensors;
