//! The MCP server's stdio, with the JSON-RPC error replies rmcp leaves out.
//!
//! rmcp's stdio transport drops a line it cannot decode without a word, so a client that sent
//! invalid JSON, invalid UTF-8, a lone surrogate, a document nested too deep or an oversized
//! line waited forever; and a known method with `params` of the wrong shape fell through to
//! "method not found". JSON-RPC 2.0 requires `-32700 Parse error` and `-32602 Invalid params`.
//! So every line from stdin is checked here first: a line that passes goes to rmcp unchanged,
//! one that does not is answered here. Both rmcp's messages and these replies reach stdout
//! through one writer, a whole line at a time, so stdout stays one JSON-RPC message a line.
//!
//! rmcp also keys the requests in flight by their id, so a client that reused an id (three
//! pipelined `tools/list` with `id: 7`, a `tools/call` and a `ping` both `id: 9`) got one answer.
//! A reused id is the client's mistake, not a reason for silence: every request is handed to rmcp
//! under an id of this server's own ([`Ids`]), and its answer goes back under the client's.
//!
//! A request before `initialize` (and without the protocol version in its `_meta`, which a
//! stateless request carries) got rmcp's "-32602 request _meta is missing", which tells the
//! client nothing it did: it is answered here "not initialized" ([`before_initialize`]). A
//! notification or a response before `initialize` made rmcp end the session: it is dropped.

use std::collections::HashMap;
use std::io;
use std::sync::{Arc, Mutex};

use knowledge::contract::strict_json::{self, StrictJsonError};
use rmcp::model::{CallToolRequestParams, InitializeRequestParams, PaginatedRequestParams};
use serde::de::DeserializeOwned;
use serde_json::{json, Value};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// Longest line read from a client; a longer one is answered with a parse error, unbuffered.
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;
const PIPE_BYTES: usize = 64 * 1024;

/// The two ends rmcp serves on, and the task writing stdout (await it after the service ends so
/// the last replies are flushed).
pub struct FilteredStdio {
    pub from_client: DuplexStream,
    pub to_client: DuplexStream,
    pub writer: JoinHandle<()>,
}

/// Start the tasks that filter stdin and serialise stdout. Must run inside a tokio runtime.
pub fn start() -> FilteredStdio {
    let (to_server, from_client) = tokio::io::duplex(PIPE_BYTES);
    let (to_client, from_server) = tokio::io::duplex(PIPE_BYTES);
    let (lines, outgoing) = mpsc::channel::<Vec<u8>>(64);
    let ids = Arc::new(Mutex::new(Ids::default()));
    tokio::spawn(read_client(
        BufReader::new(tokio::io::stdin()),
        to_server,
        lines.clone(),
        ids.clone(),
    ));
    tokio::spawn(forward_server(from_server, lines, ids));
    let writer = tokio::spawn(write_stdout(outgoing));
    FilteredStdio {
        from_client,
        to_client,
        writer,
    }
}

/// What to do with one line from the client.
#[derive(Debug, PartialEq)]
enum Verdict {
    /// Hand it to rmcp (the message as read).
    Pass(Value),
    /// Nothing to do (a blank line).
    Skip,
    /// Answer it here with this JSON-RPC error document.
    Reply(Value),
}

/// The ids of the client's requests in flight, under the ids rmcp sees.
#[derive(Default)]
pub struct Ids {
    next: u64,
    /// rmcp's id → the client's.
    in_flight: HashMap<u64, Value>,
}

impl Ids {
    /// A request from the client, under an id no other request in flight has; a cancellation
    /// names the newest request the client sent under that id.
    fn inbound(&mut self, mut message: Value) -> Value {
        let Some(obj) = message.as_object_mut() else {
            return message;
        };
        let is_request = obj.contains_key("method") && obj.get("id").is_some_and(|i| !i.is_null());
        if is_request {
            self.next += 1;
            let theirs = obj
                .insert("id".into(), json!(self.next))
                .unwrap_or(Value::Null);
            self.in_flight.insert(self.next, theirs);
        } else if obj.get("method").and_then(Value::as_str) == Some("notifications/cancelled") {
            let ours = obj
                .get("params")
                .and_then(|p| p.get("requestId"))
                .and_then(|theirs| {
                    self.in_flight
                        .iter()
                        .filter(|(_, t)| *t == theirs)
                        .map(|(ours, _)| *ours)
                        .max()
                });
            if let (Some(ours), Some(params)) = (ours, obj.get_mut("params")) {
                params["requestId"] = json!(ours);
            }
        }
        message
    }

    /// A line from rmcp: an answer to one of the client's requests goes back under the
    /// client's id; anything else (rmcp's own requests and notifications) is unchanged.
    fn outbound(&mut self, line: Vec<u8>) -> Vec<u8> {
        let Ok(mut message) = serde_json::from_slice::<Value>(&line) else {
            return line;
        };
        let Some(obj) = message.as_object_mut() else {
            return line;
        };
        let is_answer = !obj.contains_key("method")
            && (obj.contains_key("result") || obj.contains_key("error"));
        let theirs = obj
            .get("id")
            .and_then(Value::as_u64)
            .filter(|_| is_answer)
            .and_then(|ours| self.in_flight.remove(&ours));
        match theirs {
            Some(theirs) => {
                obj.insert("id".into(), theirs);
                let mut bytes = message.to_string().into_bytes();
                bytes.push(b'\n');
                bytes
            }
            None => line,
        }
    }
}

async fn read_client<R: AsyncBufRead + Unpin>(
    mut input: R,
    mut to_server: DuplexStream,
    replies: mpsc::Sender<Vec<u8>>,
    ids: Arc<Mutex<Ids>>,
) {
    let mut initialized = false;
    loop {
        let line = match next_line(&mut input, MAX_LINE_BYTES).await {
            Ok(Some(line)) => line,
            Ok(None) | Err(_) => break,
        };
        let verdict = match &line {
            Line::Complete(bytes) => match check(bytes) {
                Verdict::Pass(message) if !initialized => {
                    initialized =
                        message.get("method").and_then(Value::as_str) == Some("initialize");
                    let request = message.get("method").is_some()
                        && message.get("id").is_some_and(|i| !i.is_null());
                    match before_initialize(&message) {
                        Some(refusal) => Verdict::Reply(refusal),
                        // A notification or a stray response before the handshake: rmcp ends
                        // the session on it, and it asks for no answer.
                        None if !request && !initialized => Verdict::Skip,
                        None => Verdict::Pass(message),
                    }
                }
                // The handshake happens once: a second `initialize` would be answered as if
                // the session started again.
                Verdict::Pass(message)
                    if message.get("method").and_then(Value::as_str) == Some("initialize") =>
                {
                    match message.get("id").filter(|i| !i.is_null()) {
                        Some(id) => Verdict::Reply(error_doc(
                            id.clone(),
                            -32600,
                            "Invalid Request: already initialized (initialize is sent once)",
                        )),
                        None => Verdict::Skip,
                    }
                }
                other => other,
            },
            Line::TooLong => Verdict::Reply(error_doc(
                Value::Null,
                -32700,
                &format!("Parse error: a message over {MAX_LINE_BYTES} bytes"),
            )),
        };
        match (verdict, line) {
            (Verdict::Pass(message), _) => {
                let message = match ids.lock() {
                    Ok(mut ids) => ids.inbound(message),
                    Err(_) => break,
                };
                let mut bytes = message.to_string().into_bytes();
                bytes.push(b'\n');
                if to_server.write_all(&bytes).await.is_err() {
                    break;
                }
            }
            (Verdict::Reply(doc), _) => {
                let mut bytes = doc.to_string().into_bytes();
                bytes.push(b'\n');
                if replies.send(bytes).await.is_err() {
                    break;
                }
            }
            _ => {}
        }
    }
    // Dropping `to_server` is rmcp's end of input: the service stops as it did on stdin's EOF.
}

async fn forward_server(
    from_server: DuplexStream,
    lines: mpsc::Sender<Vec<u8>>,
    ids: Arc<Mutex<Ids>>,
) {
    let mut reader = BufReader::new(from_server);
    loop {
        let mut line = Vec::new();
        match reader.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {
                if !line.ends_with(b"\n") {
                    line.push(b'\n');
                }
                let line = match ids.lock() {
                    Ok(mut ids) => ids.outbound(line),
                    Err(_) => break,
                };
                if lines.send(line).await.is_err() {
                    break;
                }
            }
        }
    }
}

async fn write_stdout(mut outgoing: mpsc::Receiver<Vec<u8>>) {
    let mut stdout = tokio::io::stdout();
    while let Some(line) = outgoing.recv().await {
        if stdout.write_all(&line).await.is_err() || stdout.flush().await.is_err() {
            break;
        }
    }
}

enum Line {
    Complete(Vec<u8>),
    TooLong,
}

/// The next line without its `'\n'`, never buffering more than `max` bytes of it; `None` at
/// the end of input.
async fn next_line<R: AsyncBufRead + Unpin>(input: &mut R, max: usize) -> io::Result<Option<Line>> {
    let mut line = Vec::new();
    let mut too_long = false;
    let mut any = false;
    loop {
        let chunk = input.fill_buf().await?;
        if chunk.is_empty() {
            return Ok(any.then(|| finish(line, too_long)));
        }
        any = true;
        let newline = chunk.iter().position(|&b| b == b'\n');
        let take = newline.unwrap_or(chunk.len());
        if !too_long {
            if line.len() + take > max {
                too_long = true;
                line = Vec::new();
            } else {
                line.extend_from_slice(chunk.get(..take).unwrap_or(&[]));
            }
        }
        input.consume(take + usize::from(newline.is_some()));
        if newline.is_some() {
            return Ok(Some(finish(line, too_long)));
        }
    }
}

fn finish(line: Vec<u8>, too_long: bool) -> Line {
    if too_long {
        Line::TooLong
    } else {
        Line::Complete(line)
    }
}

/// Whether rmcp can take a line, or the error reply it is owed.
fn check(line: &[u8]) -> Verdict {
    let line = line.trim_ascii();
    if line.is_empty() {
        return Verdict::Skip;
    }
    let Ok(text) = std::str::from_utf8(line) else {
        return Verdict::Reply(error_doc(Value::Null, -32700, "Parse error: invalid UTF-8"));
    };
    // Lone surrogates and nesting deeper than 128 levels are malformed too; a key given twice
    // would be read as its last value by rmcp, so it is refused like in every request document.
    let message: Value = match strict_json::parse(text) {
        Ok(v) => v,
        Err(StrictJsonError::Malformed { line, column }) => {
            return Verdict::Reply(error_doc(
                Value::Null,
                -32700,
                &format!("Parse error: not JSON at line {line} column {column}"),
            ))
        }
        Err(StrictJsonError::DuplicateKey { field }) => {
            // The id is still readable unless it is the key given twice.
            let id = serde_json::from_str::<Value>(text)
                .ok()
                .and_then(|v| v.get("id").cloned())
                .filter(|id| field != "id" && (id.is_string() || id.is_number()))
                .unwrap_or(Value::Null);
            return Verdict::Reply(error_doc(
                id,
                -32600,
                &format!("Invalid Request: the key {field} appears twice"),
            ));
        }
    };
    let Some(obj) = message.as_object() else {
        return Verdict::Reply(error_doc(
            Value::Null,
            -32600,
            "Invalid Request: a message must be a JSON object",
        ));
    };
    let id = obj.get("id").cloned().unwrap_or(Value::Null);
    let method = obj.get("method").and_then(Value::as_str);
    let is_response = obj.contains_key("result") || obj.contains_key("error");
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0")
        || (method.is_none() && !is_response)
    {
        // rmcp drops what it cannot type as a message; JSON-RPC owes an answer.
        return Verdict::Reply(error_doc(
            id,
            -32600,
            "Invalid Request: not a JSON-RPC 2.0 request, notification or response",
        ));
    }
    let (Some(method), false) = (method, id.is_null()) else {
        return Verdict::Pass(message);
    };
    match params_fit(method, obj.get("params")) {
        Ok(()) => Verdict::Pass(message),
        Err(why) => Verdict::Reply(error_doc(
            id,
            -32602,
            &format!("Invalid params for {method}: {why}"),
        )),
    }
}

/// Whether `params` has the shape the method takes (methods this server does not know are
/// left to rmcp, which answers "method not found").
fn params_fit(method: &str, params: Option<&Value>) -> Result<(), String> {
    fn parse<T: DeserializeOwned>(params: Option<&Value>) -> Result<(), String> {
        let params = params.cloned().unwrap_or(Value::Null);
        serde_json::from_value::<T>(params)
            .map(|_| ())
            .map_err(|e| e.to_string())
    }
    match method {
        "initialize" => parse::<InitializeRequestParams>(params),
        "tools/call" => parse::<CallToolRequestParams>(params),
        "tools/list" => parse::<Option<PaginatedRequestParams>>(params),
        "ping" => match params {
            None | Some(Value::Null) | Some(Value::Object(_)) => Ok(()),
            Some(_) => Err("params must be an object".into()),
        },
        _ => Ok(()),
    }
}

/// The answer to a request made before `initialize`: anything but `initialize` itself, a
/// `ping`, a notification, or a stateless request (its `_meta` names the protocol version).
fn before_initialize(message: &Value) -> Option<Value> {
    let method = message.get("method").and_then(Value::as_str)?;
    let id = message.get("id").filter(|i| !i.is_null())?;
    let stateless = message
        .pointer("/params/_meta")
        .and_then(|m| m.get("io.modelcontextprotocol/protocolVersion"))
        .is_some();
    if matches!(method, "initialize" | "ping") || stateless {
        return None;
    }
    Some(error_doc(
        id.clone(),
        NOT_INITIALIZED,
        &format!(
            "not initialized: send `initialize` (then `notifications/initialized`) before \
             `{}`",
            method.chars().take(64).collect::<String>()
        ),
    ))
}

/// The code JSON-RPC servers give a request before the handshake (LSP's ServerNotInitialized).
const NOT_INITIALIZED: i64 = -32002;

fn error_doc(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_before_initialize_is_refused_as_not_initialized() {
        let refused = |m: Value| before_initialize(&m).map(|d| d["error"]["code"].clone());
        assert_eq!(
            refused(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})),
            Some(json!(NOT_INITIALIZED))
        );
        for passes in [
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}),
            json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {"_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-01-01"}}}),
        ] {
            assert_eq!(refused(passes.clone()), None, "{passes}");
        }
    }

    fn code_of(line: &[u8]) -> Option<i64> {
        match check(line) {
            Verdict::Reply(doc) => doc["error"]["code"].as_i64(),
            _ => None,
        }
    }

    #[test]
    fn every_undecodable_line_is_owed_a_parse_error() {
        assert_eq!(code_of(b"not json"), Some(-32700));
        assert_eq!(code_of(b"{\"jsonrpc\":\"2.0\",\xff}"), Some(-32700));
        assert_eq!(
            code_of(br#"{"jsonrpc":"2.0","id":1,"method":"ping","x":"\ud800"}"#),
            Some(-32700)
        );
        let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
        assert_eq!(code_of(deep.as_bytes()), Some(-32700));
        assert_eq!(code_of(b"42"), Some(-32600));
        assert_eq!(
            code_of(br#"{"jsonrpc": "2.0", "id": 1, "method": "ping", "id": 2}"#),
            Some(-32600)
        );
        assert_eq!(code_of(br#"{"id": 1, "method": "ping"}"#), Some(-32600));
        assert_eq!(code_of(br#"{"jsonrpc": "2.0", "id": 1}"#), Some(-32600));
        assert!(matches!(
            check(br#"{"jsonrpc": "2.0", "id": 1, "result": {}}"#),
            Verdict::Pass(_)
        ));
        assert_eq!(check(b"   "), Verdict::Skip);
    }

    #[test]
    fn wrong_params_shapes_are_invalid_params() {
        let call = |params: Value| {
            json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params}).to_string()
        };
        assert_eq!(code_of(call(json!([1, 2])).as_bytes()), Some(-32602));
        assert_eq!(
            code_of(call(json!({"name": "knowledge_search", "arguments": 17})).as_bytes()),
            Some(-32602)
        );
        assert!(matches!(
            check(call(json!({"name": "knowledge_search", "arguments": {}})).as_bytes()),
            Verdict::Pass(_)
        ));
        let unknown = json!({"jsonrpc": "2.0", "id": 8, "method": "x/y", "params": 3});
        assert!(matches!(
            check(unknown.to_string().as_bytes()),
            Verdict::Pass(_)
        ));
    }

    #[tokio::test]
    async fn an_oversized_line_is_read_past_without_keeping_it() {
        let mut data = vec![b'x'; 100];
        data.extend_from_slice(b"\n{}\n");
        let mut input = BufReader::with_capacity(16, &data[..]);
        assert!(matches!(
            next_line(&mut input, 50).await,
            Ok(Some(Line::TooLong))
        ));
        match next_line(&mut input, 50).await {
            Ok(Some(Line::Complete(l))) => assert_eq!(l, b"{}"),
            _ => panic!("the next line is read"),
        }
        assert!(matches!(next_line(&mut input, 50).await, Ok(None)));
    }
}
