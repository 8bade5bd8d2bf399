//! The stdio transport around tower-lsp's `Server`: a framing filter in front of it and
//! an output mux behind it.
//!
//! tower-lsp ends its read loop on the first frame it cannot decode, and the server
//! then exits 0 without a word. The filter reads the client's frames itself and passes
//! on only those that are single JSON-RPC messages; anything else gets a JSON-RPC error
//! response (`-32700` parse error or `-32600` invalid request, id null unless the
//! message names one), a line on stderr, and the filter keeps reading: after a garbage
//! header it resynchronizes at the next `Content-Length:`. Bodies are bounded
//! ([`MAX_BODY`]). The mux writes the server's frames and the injected error frames to
//! stdout one whole frame at a time, so they never interleave.

use std::io::Read;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt};
use tokio::sync::mpsc;
use tower_lsp_server::jsonrpc::{Request, Response};

/// The largest message body accepted (a 64 MiB document is far past any real one).
pub const MAX_BODY: usize = 64 << 20;
/// The longest header line; anything longer is garbage.
const MAX_HEADER_LINE: usize = 1024;
const HEADER: &[u8] = b"Content-Length:";

/// What the filter decided about one frame.
#[derive(Debug, PartialEq)]
pub enum Verdict {
    /// A JSON-RPC message for the server: its body.
    Forward(Vec<u8>),
    /// A whole error frame for the client.
    Reply(Vec<u8>),
}

/// A whole frame around a body.
pub fn frame(body: &[u8]) -> Vec<u8> {
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body);
    out
}

fn error_frame(code: i64, message: &str, id: Value) -> Vec<u8> {
    let body = json!({ "jsonrpc": "2.0", "error": { "code": code, "message": message }, "id": id });
    frame(body.to_string().as_bytes())
}

fn parse_error(detail: &str) -> Vec<u8> {
    eprintln!("deployfit lsp: malformed frame: {detail}");
    error_frame(-32700, &format!("Parse error: {detail}"), Value::Null)
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Classifies one frame's body: a message tower-lsp accepts, or an error to answer.
pub fn check_body(body: Vec<u8>) -> Verdict {
    if serde_json::from_slice::<Request>(&body).is_ok()
        || serde_json::from_slice::<Response>(&body).is_ok()
    {
        return Verdict::Forward(body);
    }
    let value = match serde_json::from_slice::<Value>(&body) {
        Ok(value) => value,
        Err(error) => {
            return Verdict::Reply(parse_error(&format!("the body is not JSON ({error})")));
        }
    };
    let reply = match value {
        Value::Array(_) => {
            eprintln!("deployfit lsp: a JSON-RPC batch was refused");
            error_frame(
                -32600,
                "Invalid request: batches are not supported",
                Value::Null,
            )
        }
        value => {
            let id = match value.get("id") {
                Some(id @ (Value::Number(_) | Value::String(_))) => id.clone(),
                _ => Value::Null,
            };
            eprintln!("deployfit lsp: not a JSON-RPC message (id {id})");
            error_frame(
                -32600,
                "Invalid request: not a JSON-RPC 2.0 request, notification or response",
                id,
            )
        }
    };
    Verdict::Reply(reply)
}

/// A buffered reader that can look ahead and put bytes back.
struct Input<R> {
    reader: R,
    buf: Vec<u8>,
    pos: usize,
    eof: bool,
}

impl<R: Read> Input<R> {
    fn available(&self) -> &[u8] {
        &self.buf[self.pos..]
    }

    /// Reads more bytes; false at the end of input.
    fn fill(&mut self) -> bool {
        if self.eof {
            return false;
        }
        if self.pos > 0 && self.pos == self.buf.len() {
            self.buf.clear();
            self.pos = 0;
        } else if self.pos > 1 << 16 {
            self.buf.drain(..self.pos);
            self.pos = 0;
        }
        let mut chunk = [0u8; 1 << 16];
        loop {
            match self.reader.read(&mut chunk) {
                Ok(0) => {
                    self.eof = true;
                    return false;
                }
                Ok(n) => {
                    self.buf.extend_from_slice(&chunk[..n]);
                    return true;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    eprintln!("deployfit lsp: reading stdin failed: {e}");
                    self.eof = true;
                    return false;
                }
            }
        }
    }

    /// One line with its `\n`, at most `limit` bytes (a longer one is cut there); `None`
    /// at the end of input.
    fn line(&mut self, limit: usize) -> Option<Vec<u8>> {
        loop {
            let available = self.available();
            if let Some(i) = available.iter().take(limit).position(|b| *b == b'\n') {
                let line = available[..=i].to_vec();
                self.pos += i + 1;
                return Some(line);
            }
            if available.len() >= limit {
                let line = available[..limit].to_vec();
                self.pos += limit;
                return Some(line);
            }
            if !self.fill() {
                let line = self.available().to_vec();
                self.pos = self.buf.len();
                return (!line.is_empty()).then_some(line);
            }
        }
    }

    /// Exactly `n` bytes, or what was left at the end of input.
    fn take(&mut self, n: usize) -> Result<Vec<u8>, usize> {
        while self.available().len() < n {
            if !self.fill() {
                let got = self.available().len();
                self.pos = self.buf.len();
                return Err(got);
            }
        }
        let out = self.available()[..n].to_vec();
        self.pos += n;
        Ok(out)
    }

    fn unread(&mut self, bytes: &[u8]) {
        let rest = self.buf.split_off(self.pos);
        self.buf.truncate(self.pos);
        self.buf.extend_from_slice(bytes);
        self.buf.extend_from_slice(&rest);
    }

    /// Skips to the next `Content-Length:` (kept); false at the end of input.
    fn resync(&mut self) -> bool {
        loop {
            if let Some(i) = find(self.available(), HEADER) {
                self.pos += i;
                return true;
            }
            // Keep a tail that could be the start of the header.
            let keep = self.available().len().min(HEADER.len() - 1);
            self.pos = self.buf.len() - keep;
            if !self.fill() {
                self.pos = self.buf.len();
                return false;
            }
        }
    }
}

/// Reads frames from `reader` until its end, deciding each: `emit` gets every verdict in
/// order (the number of frames is unbounded, the memory is not: one body at a time).
pub fn filter(reader: impl Read, mut emit: impl FnMut(Verdict) -> bool) {
    let mut input = Input {
        reader,
        buf: Vec::new(),
        pos: 0,
        eof: false,
    };
    'frames: loop {
        // The header block.
        let mut length: Option<usize> = None;
        let mut lines = 0;
        loop {
            let Some(line) = input.line(MAX_HEADER_LINE) else {
                if lines > 0 {
                    eprintln!("deployfit lsp: the input ended inside a header");
                }
                return;
            };
            let text = line.strip_suffix(b"\n").unwrap_or(&line);
            let text = text.strip_suffix(b"\r").unwrap_or(text);
            if text.is_empty() {
                if lines == 0 {
                    continue; // blank lines between frames
                }
                break;
            }
            lines += 1;
            let header = std::str::from_utf8(text)
                .ok()
                .and_then(|t| t.split_once(':'))
                .map(|(name, value)| (name.trim(), value.trim()));
            let problem = match header {
                Some((name, value)) if name.eq_ignore_ascii_case("Content-Length") => {
                    match value.parse::<usize>() {
                        Ok(n) if n <= MAX_BODY => {
                            length = Some(n);
                            None
                        }
                        Ok(n) => Some(format!(
                            "Content-Length {n} is over the limit of {MAX_BODY} bytes"
                        )),
                        Err(_) => Some(format!("bad Content-Length `{}`", clip(value))),
                    }
                }
                Some((name, _)) if name.eq_ignore_ascii_case("Content-Type") => None,
                _ if line.len() >= MAX_HEADER_LINE => Some("a header line too long".to_string()),
                _ => Some(format!(
                    "expected a `Content-Length:` header, found `{}`",
                    clip(&String::from_utf8_lossy(text))
                )),
            };
            if let Some(problem) = problem {
                if !emit(Verdict::Reply(parse_error(&problem))) {
                    return;
                }
                // Resynchronize: at a header later in this line, else further on.
                if let Some(i) = find(&line[1..], HEADER) {
                    input.unread(&line[1 + i..]);
                } else if !input.resync() {
                    return;
                }
                continue 'frames;
            }
        }
        let Some(length) = length else {
            if !emit(Verdict::Reply(parse_error(
                "a header without Content-Length",
            ))) {
                return;
            }
            continue;
        };
        let body = match input.take(length) {
            Ok(body) => body,
            Err(got) => {
                emit(Verdict::Reply(parse_error(&format!(
                    "the input ended {got} bytes into a {length}-byte body"
                ))));
                return;
            }
        };
        let verdict = check_body(body);
        if let Verdict::Reply(_) = verdict
            && let Some(rest) = next_frame_in_body(&input, length)
        {
            // A body that is not JSON and runs into the next frame's header was cut
            // short (its length overstated): it is answered, and the next frame served.
            input.unread(&rest);
        }
        if !emit(verdict) {
            return;
        }
    }
}

/// After a body that was not JSON: the part of it from a `Content-Length:` header on, to
/// be read again (the declared length was longer than the real body).
fn next_frame_in_body<R: Read>(input: &Input<R>, length: usize) -> Option<Vec<u8>> {
    let body = &input.buf[input.pos - length..input.pos];
    if serde_json::from_slice::<Value>(body).is_ok() {
        return None;
    }
    if let Some(i) = find(body, HEADER) {
        return Some(body[i..].to_vec());
    }
    // The body ends with the start of a header that the bytes already read go on with
    // (`…}Cont` + `ent-Length: …`): only what is buffered is looked at, never waited for.
    let rest = input.available();
    (1..HEADER.len())
        .rev()
        .find(|k| body.ends_with(&HEADER[..*k]) && rest.starts_with(&HEADER[*k..]))
        .map(|k| body[body.len() - k..].to_vec())
}

fn clip(text: &str) -> String {
    let clipped: String = text.chars().take(40).collect();
    if clipped.len() < text.len() {
        format!("{clipped}…")
    } else {
        clipped
    }
}

/// Serves `server` (tower-lsp's `Server::serve`, given its input and output) over the
/// process's stdin and stdout through the filter and the mux.
pub async fn serve_stdio<F, Fut>(server: F)
where
    F: FnOnce(tokio::io::DuplexStream, tokio::io::DuplexStream) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let (to_server, server_input) = tokio::io::duplex(1 << 16);
    let (server_output, from_server) = tokio::io::duplex(1 << 16);
    // Bounded: a client that floods garbage and reads nothing blocks the filter instead
    // of growing a queue of error frames.
    let (frames, mut outgoing) = mpsc::channel::<Option<Vec<u8>>>(64);

    // The filter: a plain thread on blocking stdin (it may stay blocked there after the
    // server exits; it does not keep the process alive).
    // Few bodies in flight: each may be up to `MAX_BODY`.
    let (bodies, mut incoming) = mpsc::channel::<Vec<u8>>(4);
    let replies = frames.clone();
    std::thread::spawn(move || {
        filter(std::io::stdin().lock(), |verdict| match verdict {
            Verdict::Forward(body) => bodies.blocking_send(body).is_ok(),
            Verdict::Reply(frame) => replies.blocking_send(Some(frame)).is_ok(),
        });
    });
    tokio::spawn(async move {
        let mut to_server = to_server;
        while let Some(body) = incoming.recv().await {
            if to_server.write_all(&frame(&body)).await.is_err() {
                break;
            }
        }
        let _ = to_server.shutdown().await;
    });

    // The server's frames, whole, into the mux; `None` when the server is done.
    let server_frames = frames;
    tokio::spawn(async move {
        let mut reader = tokio::io::BufReader::new(from_server);
        loop {
            let mut length = None;
            loop {
                let mut line = String::new();
                match reader.read_line(&mut line).await {
                    Ok(0) | Err(_) => {
                        let _ = server_frames.send(None).await;
                        return;
                    }
                    Ok(_) => {}
                }
                let line = line.trim_end();
                if line.is_empty() {
                    break;
                }
                if let Some((name, value)) = line.split_once(':')
                    && name.trim().eq_ignore_ascii_case("Content-Length")
                {
                    length = value.trim().parse::<usize>().ok();
                }
            }
            let Some(length) = length else { continue };
            let mut body = vec![0; length];
            if reader.read_exact(&mut body).await.is_err() {
                let _ = server_frames.send(None).await;
                return;
            }
            if server_frames.send(Some(frame(&body))).await.is_err() {
                return;
            }
        }
    });

    let writer = tokio::spawn(async move {
        let mut stdout = tokio::io::stdout();
        while let Some(Some(frame)) = outgoing.recv().await {
            if stdout.write_all(&frame).await.is_err() || stdout.flush().await.is_err() {
                break;
            }
        }
        let _ = stdout.flush().await;
    });

    server(server_input, server_output).await;
    let _ = writer.await;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(input: &[u8]) -> Vec<Verdict> {
        let mut out = Vec::new();
        filter(input, |v| {
            out.push(v);
            true
        });
        out
    }

    fn reply_of(verdict: &Verdict) -> Value {
        let Verdict::Reply(frame) = verdict else {
            panic!("expected a reply, got {verdict:?}")
        };
        let body = &frame[find(frame, b"\r\n\r\n").unwrap() + 4..];
        serde_json::from_slice(body).unwrap()
    }

    const OK: &str = r#"{"jsonrpc":"2.0","id":1,"method":"shutdown"}"#;

    #[test]
    fn passes_messages_and_answers_garbage() {
        let mut input = frame(OK.as_bytes());
        input.extend(frame(b"not json"));
        input.extend(frame(b"[1, 2]"));
        input.extend(frame(br#"{"id": 7, "x": 1}"#));
        input.extend(b"garbage line\r\nmore garbage");
        input.extend(frame(OK.as_bytes()));
        input.extend(b"Content-Length: 12abc\r\n\r\n");
        input.extend(b"Content-Length: 99999999999999999999\r\n\r\n");
        input.extend(frame(OK.as_bytes()));
        let out = run(&input);
        assert_eq!(out[0], Verdict::Forward(OK.as_bytes().to_vec()));
        assert_eq!(reply_of(&out[1])["error"]["code"], -32700);
        assert_eq!(reply_of(&out[2])["error"]["code"], -32600);
        assert!(
            reply_of(&out[2])["error"]["message"]
                .as_str()
                .unwrap()
                .contains("batches are not supported")
        );
        assert_eq!(reply_of(&out[3])["id"], 7);
        assert_eq!(reply_of(&out[4])["error"]["code"], -32700);
        assert_eq!(out[5], Verdict::Forward(OK.as_bytes().to_vec()));
        assert_eq!(reply_of(&out[6])["error"]["code"], -32700);
        assert_eq!(reply_of(&out[7])["error"]["code"], -32700);
        assert_eq!(out[8], Verdict::Forward(OK.as_bytes().to_vec()));
        assert_eq!(out.len(), 9);
    }

    #[test]
    fn a_truncated_body_resyncs_at_the_next_frame() {
        let mut input =
            format!("Content-Length: {}\r\n\r\n{{\"jsonrpc\":", OK.len() + 5).into_bytes();
        input.extend(frame(OK.as_bytes()));
        input.extend(frame(OK.as_bytes()));
        let out = run(&input);
        assert_eq!(reply_of(&out[0])["error"]["code"], -32700);
        assert_eq!(out[1], Verdict::Forward(OK.as_bytes().to_vec()));
        assert_eq!(out[2], Verdict::Forward(OK.as_bytes().to_vec()));
        assert_eq!(out.len(), 3);
        // A length that overstates the body by a few bytes: the next header is cut.
        let mut input = format!("Content-Length: {}\r\n\r\n{OK}", OK.len() + 3).into_bytes();
        input.extend(frame(OK.as_bytes()));
        let out = run(&input);
        assert_eq!(reply_of(&out[0])["error"]["code"], -32700);
        assert_eq!(out[1], Verdict::Forward(OK.as_bytes().to_vec()));
        assert_eq!(out.len(), 2);
        // The input ends inside a body.
        let out = run(b"Content-Length: 100\r\n\r\n{\"a\"");
        assert_eq!(out.len(), 1);
        assert_eq!(reply_of(&out[0])["error"]["code"], -32700);
    }

    #[test]
    fn long_garbage_costs_linear_time() {
        let mut input = vec![b'x'; 8 << 20];
        input.extend(frame(OK.as_bytes()));
        let out = run(&input);
        assert_eq!(out.len(), 2);
        assert_eq!(out[1], Verdict::Forward(OK.as_bytes().to_vec()));
    }
}
