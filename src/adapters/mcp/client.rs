//! A blocking MCP client for one external source: a local child process speaking MCP on stdio.
//!
//! The engine is blocking and abandons a lane after its timeout, so this client owns a small
//! tokio runtime and gives every call its own deadline (a little shorter than the lane timeout).
//! The child is started lazily, reused across calls and restarted after a crash. Startup runs as
//! a task of its own with a longer deadline, so a slow server is not killed just because the
//! first call gave up waiting for it. A call that misses its deadline cancels its request, kills
//! the child and reaps it: a hung server never outlives the call that found it hung, and no
//! zombie is left behind. Dropping the client kills and reaps the child too.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::{CallToolRequestParams, CallToolResult, JsonObject};
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceError, ServiceExt};
use tokio::process::Child;
use tokio::sync::watch;

use crate::config::McpSource;
use crate::contract::Code;
use crate::lanes::SourceFailure;

use super::error::{McpError, McpFailure};

/// How long a server may take to start and answer `initialize`.
pub const STARTUP_TIMEOUT: Duration = Duration::from_secs(10);

/// The child process of a connection; shared so that a kill can reach it from anywhere.
type ChildSlot = Arc<Mutex<Option<Child>>>;

/// A running connection: the MCP service and its child process.
struct Conn {
    service: RunningService<RoleClient, ()>,
    child: ChildSlot,
    pid: Option<u32>,
}

type Started = Option<Result<Arc<Conn>, SourceFailure>>;

enum State {
    Idle,
    Starting(watch::Receiver<Started>, ChildSlot),
    Ready(Arc<Conn>),
}

/// One external MCP server and the way to call its tools.
pub struct McpClient {
    command: String,
    args: Vec<String>,
    env: Vec<(String, String)>,
    call_timeout: Duration,
    startup_timeout: Duration,
    runtime: Option<tokio::runtime::Runtime>,
    state: Arc<Mutex<State>>,
}

impl McpClient {
    /// A client for `source`; every call must finish within `call_timeout`.
    pub fn new(source: &McpSource, call_timeout: Duration) -> McpClient {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("knowledge-mcp-source")
            .enable_all()
            .build()
            .ok();
        McpClient {
            command: source.command.clone(),
            args: source.args.clone(),
            env: source
                .env
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            call_timeout,
            startup_timeout: STARTUP_TIMEOUT,
            runtime,
            state: Arc::new(Mutex::new(State::Idle)),
        }
    }

    /// Change how long the server may take to start (default [`STARTUP_TIMEOUT`]).
    pub fn with_startup_timeout(mut self, timeout: Duration) -> McpClient {
        self.startup_timeout = timeout;
        self
    }

    /// The program this client starts (for messages; never its arguments or environment).
    pub fn command(&self) -> &str {
        &self.command
    }

    pub fn call_timeout(&self) -> Duration {
        self.call_timeout
    }

    /// The process id of the running server, if one is running.
    pub fn pid(&self) -> Option<u32> {
        match &*lock(&self.state) {
            State::Ready(c) => c.pid,
            State::Starting(_, slot) => lock(slot).as_ref().and_then(|c| c.id()),
            State::Idle => None,
        }
    }

    /// Call `tool` with `args` and wait for its result until the call's deadline.
    pub fn call(&self, tool: &str, args: JsonObject) -> Result<CallToolResult, SourceFailure> {
        self.call_within(tool, args, self.call_timeout)
    }

    /// [`McpClient::call`] with a deadline of its own (a read a person waits for is not bound
    /// by the lane timeout of a search).
    pub fn call_within(
        &self,
        tool: &str,
        args: JsonObject,
        deadline: Duration,
    ) -> Result<CallToolResult, SourceFailure> {
        let Some(rt) = &self.runtime else {
            return Err(self.unavailable(McpError::NoRuntime));
        };
        let params = CallToolRequestParams::new(tool.to_string()).with_arguments(args);
        rt.block_on(async {
            let started = Instant::now();
            let conn = match tokio::time::timeout(deadline, self.connection()).await {
                Ok(conn) => conn?,
                Err(_) => return Err(self.unavailable(McpError::StillStarting(deadline))),
            };
            let remaining = deadline.saturating_sub(started.elapsed());
            let peer = conn.service.peer().clone();
            match tokio::time::timeout(remaining, peer.call_tool(params)).await {
                Ok(Ok(result)) => Ok(result),
                Ok(Err(e)) => {
                    let exited = matches!(e, ServiceError::TransportClosed)
                        || conn.service.is_closed()
                        || child_exited(&conn.child);
                    self.discard(&conn).await;
                    Err(self.unavailable(if exited {
                        McpError::Exited(e)
                    } else {
                        McpError::Call(e)
                    }))
                }
                Err(_) => {
                    self.discard(&conn).await;
                    Err(self.unavailable(McpError::NoAnswer(deadline)))
                }
            }
        })
    }

    fn unavailable(&self, why: McpError) -> SourceFailure {
        failure(&self.command, why)
    }

    /// The running connection, starting the server when there is none (or it died).
    async fn connection(&self) -> Result<Arc<Conn>, SourceFailure> {
        let mut pending = {
            let mut st = lock(&self.state);
            match &*st {
                State::Ready(c) if !c.service.is_closed() && !child_exited(&c.child) => {
                    return Ok(c.clone())
                }
                State::Starting(rx, _) => rx.clone(),
                _ => {
                    if let State::Ready(dead) = std::mem::replace(&mut *st, State::Idle) {
                        tokio::spawn(stop(dead));
                    }
                    let (tx, rx) = watch::channel(None);
                    let slot: ChildSlot = Arc::new(Mutex::new(None));
                    *st = State::Starting(rx.clone(), slot.clone());
                    tokio::spawn(startup(self.launch(), slot, self.state.clone(), tx));
                    rx
                }
            }
        };
        let outcome = match pending.wait_for(|v| v.is_some()).await {
            Ok(v) => v.clone(),
            Err(_) => None,
        };
        outcome.unwrap_or_else(|| Err(self.unavailable(McpError::DidNotStart)))
    }

    fn launch(&self) -> Launch {
        Launch {
            command: self.command.clone(),
            args: self.args.clone(),
            env: self.env.clone(),
            timeout: self.startup_timeout,
        }
    }

    /// Forget `conn` (when it is still the current one), stop it and reap its child.
    async fn discard(&self, conn: &Arc<Conn>) {
        {
            let mut st = lock(&self.state);
            if matches!(&*st, State::Ready(c) if Arc::ptr_eq(c, conn)) {
                *st = State::Idle;
            }
        }
        stop(conn.clone()).await;
    }
}

impl Drop for McpClient {
    fn drop(&mut self) {
        let state = std::mem::replace(&mut *lock(&self.state), State::Idle);
        let slot = match state {
            State::Ready(c) => {
                c.service.cancellation_token().cancel();
                Some(c.child.clone())
            }
            State::Starting(_, slot) => Some(slot),
            State::Idle => None,
        };
        if let Some(slot) = slot {
            kill_and_reap_blocking(&slot);
        }
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}

/// What it takes to start the server.
struct Launch {
    command: String,
    args: Vec<String>,
    env: Vec<(String, String)>,
    timeout: Duration,
}

/// Start the server, hand its child to `slot` at once (so a kill can reach it), shake hands,
/// and publish the outcome to the waiting callers and to the client's state.
async fn startup(
    launch: Launch,
    slot: ChildSlot,
    state: Arc<Mutex<State>>,
    tx: watch::Sender<Started>,
) {
    let outcome = match tokio::time::timeout(launch.timeout, connect(&launch, &slot)).await {
        Ok(r) => r,
        Err(_) => Err(McpError::StartTimeout(launch.timeout)),
    };
    let outcome = match outcome {
        Ok(conn) => Ok(Arc::new(conn)),
        Err(why) => {
            kill_and_reap(&slot).await;
            Err(failure(&launch.command, why))
        }
    };
    {
        let mut st = lock(&state);
        if matches!(&*st, State::Starting(_, s) if Arc::ptr_eq(s, &slot)) {
            *st = match &outcome {
                Ok(conn) => State::Ready(conn.clone()),
                Err(_) => State::Idle,
            };
        } else if let Ok(conn) = &outcome {
            // The client was dropped or moved on while this start was under way.
            tokio::spawn(stop(conn.clone()));
        }
    }
    let _ = tx.send(Some(outcome));
}

/// The lane's failure: the source named by its command, and why.
fn failure(command: &str, why: McpError) -> SourceFailure {
    SourceFailure::caused(
        Code::SourceUnavailable,
        McpFailure {
            command: command.to_string(),
            why,
        },
    )
}

async fn connect(launch: &Launch, slot: &ChildSlot) -> Result<Conn, McpError> {
    let mut cmd = tokio::process::Command::new(&launch.command);
    cmd.args(&launch.args)
        .envs(launch.env.iter().map(|(k, v)| (k, v)))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true);
    let mut child = cmd.spawn().map_err(McpError::Spawn)?;
    let pid = child.id();
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        *lock(slot) = Some(child);
        return Err(McpError::NoStdio);
    };
    *lock(slot) = Some(child);
    let service = ().serve((stdout, stdin)).await.map_err(|e| McpError::Handshake(Box::new(e)))?;
    Ok(Conn {
        service,
        child: slot.clone(),
        pid,
    })
}

/// Stop a connection: cancel its service, kill its child and wait for it (no zombie).
async fn stop(conn: Arc<Conn>) {
    conn.service.cancellation_token().cancel();
    kill_and_reap(&conn.child).await;
}

async fn kill_and_reap(slot: &ChildSlot) {
    let child = lock(slot).take();
    if let Some(mut child) = child {
        // `kill` sends SIGKILL and then waits, which reaps the process.
        if child.kill().await.is_err() {
            let _ = tokio::time::timeout(Duration::from_secs(2), child.wait()).await;
        }
    }
}

/// The same without a runtime (for `Drop`): SIGKILL, then poll for the exit for a short while.
fn kill_and_reap_blocking(slot: &ChildSlot) {
    let child = lock(slot).take();
    if let Some(mut child) = child {
        let _ = child.start_kill();
        for _ in 0..200 {
            match child.try_wait() {
                Ok(Some(_)) | Err(_) => return,
                Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            }
        }
    }
}

/// Whether the child has already exited (reaping it if so).
fn child_exited(slot: &ChildSlot) -> bool {
    match lock(slot).as_mut() {
        Some(child) => !matches!(child.try_wait(), Ok(None)),
        None => true,
    }
}

/// A lock that survives a panicked holder (the state stays usable).
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
