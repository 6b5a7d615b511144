//! Splitting input into statements, and the batch and interactive loops.
//!
//! Statements end with `;` (outside quoted strings) and may span lines. Comments are dropped:
//! `--` and `#` to the end of the line, `/* ... */` anywhere. A final statement without `;` is
//! run too (so `-e "show keyspaces"` works).
//!
//! Failed statements, as cassandra-cli's CliMain.processStatementInteractive treats them: with
//! `-f` (and sibyl-cli's `-e`) the message is printed on stderr as `Line N => message`, N counting
//! the statements run so far, and the run stops (cassandra-cli's `System.exit(4)`); `-B` stops the
//! same way with the bare message; statements piped into standard input without `-B`, like typed
//! ones, print the message and go on. `continue_on_error` (`--continue-on-error`) keeps `-f`, `-e`
//! and `-B` going; the exit status is still 4 when a statement failed.

use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;

use super::session::{Flow, Session};

/// One complete statement and the (1-based) line it starts on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Piece {
    pub line: usize,
    pub text: String,
}

/// Accumulates input and hands out complete statements.
#[derive(Debug, Default)]
pub struct Splitter {
    current: String,
    /// Line the current statement started on (0: nothing yet).
    start_line: usize,
    line: usize,
    in_string: bool,
    escaped: bool,
    in_block_comment: bool,
}

impl Splitter {
    pub fn new() -> Splitter {
        Splitter { line: 1, ..Splitter::default() }
    }

    /// Feeds more text (any number of lines); returns the statements it completes.
    pub fn feed(&mut self, text: &str) -> Vec<Piece> {
        let mut done = Vec::new();
        let mut chars = text.chars().peekable();
        let mut line_comment = false;
        while let Some(c) = chars.next() {
            if c == '\n' {
                line_comment = false;
                self.line += 1;
                if self.in_string {
                    self.current.push(c);
                } else if !self.current.is_empty() {
                    self.current.push(' ');
                }
                continue;
            }
            if line_comment {
                continue;
            }
            if self.in_block_comment {
                if c == '*' && chars.peek() == Some(&'/') {
                    chars.next();
                    self.in_block_comment = false;
                }
                continue;
            }
            if self.in_string {
                self.current.push(c);
                if self.escaped {
                    self.escaped = false;
                } else if c == '\\' {
                    self.escaped = true;
                } else if c == '\'' {
                    self.in_string = false;
                }
                continue;
            }
            match c {
                '-' if chars.peek() == Some(&'-') => line_comment = true,
                '#' => line_comment = true,
                '/' if chars.peek() == Some(&'*') => {
                    chars.next();
                    self.in_block_comment = true;
                }
                ';' => {
                    self.current.push(';');
                    let text = std::mem::take(&mut self.current).trim().to_string();
                    done.push(Piece { line: self.start_line.max(1), text });
                    self.start_line = 0;
                }
                c => {
                    if self.start_line == 0 && !c.is_whitespace() {
                        self.start_line = self.line;
                    }
                    if c == '\'' {
                        self.in_string = true;
                    }
                    if !(self.current.is_empty() && c.is_whitespace()) {
                        self.current.push(c);
                    }
                }
            }
        }
        done
    }

    /// True when a statement has begun but not ended.
    pub fn is_pending(&self) -> bool {
        !self.current.trim().is_empty() || self.in_string || self.in_block_comment
    }

    /// The unterminated rest, if any (end of input).
    pub fn finish(&mut self) -> Option<Piece> {
        let text = std::mem::take(&mut self.current).trim().to_string();
        (!text.is_empty()).then(|| Piece { line: self.start_line.max(1), text })
    }

    /// Forgets a half-typed statement (Ctrl-C in the interactive shell).
    pub fn reset(&mut self) {
        self.current.clear();
        self.start_line = 0;
        self.in_string = false;
        self.escaped = false;
        self.in_block_comment = false;
    }
}

/// Splits a whole script into statements.
pub fn split_script(text: &str) -> Vec<Piece> {
    let mut s = Splitter::new();
    let mut pieces = s.feed(text);
    pieces.extend(s.finish());
    pieces
}

/// How a run of statements ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchOutcome {
    pub ran: usize,
    pub failed: usize,
    /// `exit;` / `quit;` was reached.
    pub exited: bool,
}

/// How [`run_script`] treats a failed statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunMode {
    /// Errors read `Line N => message`, N counting statements (cassandra-cli's file mode).
    pub line_numbers: bool,
    /// The first failed statement ends the run.
    pub stop_at_error: bool,
}

impl RunMode {
    /// `-f FILE` and `-e STATEMENTS`.
    pub fn file(continue_on_error: bool) -> RunMode {
        RunMode { line_numbers: true, stop_at_error: !continue_on_error }
    }

    /// `-B`, statements from standard input.
    pub fn batch(continue_on_error: bool) -> RunMode {
        RunMode { line_numbers: false, stop_at_error: !continue_on_error }
    }

    /// Standard input that is not a terminal, without `-B`: each error is printed and the run
    /// goes on, as when the statements are typed.
    pub fn piped() -> RunMode {
        RunMode { line_numbers: false, stop_at_error: false }
    }
}

/// Runs the statements read from `input` as they complete (a pipe is read line by line, so a
/// slow producer's statements run as they come), printing errors to `err` as `mode` says. Fails
/// only when `input` cannot be read or `err` written.
pub fn run_script(
    session: &mut Session,
    mut input: impl BufRead,
    mode: RunMode,
    err: &mut dyn Write,
) -> std::io::Result<BatchOutcome> {
    let mut outcome = BatchOutcome { ran: 0, failed: 0, exited: false };
    let mut splitter = Splitter::new();
    let mut line = String::new();
    'input: loop {
        line.clear();
        let eof = input.read_line(&mut line)? == 0;
        let pieces = if eof { splitter.finish().into_iter().collect() } else { splitter.feed(&line) };
        for piece in pieces {
            outcome.ran += 1;
            match session.run(&piece.text) {
                Ok(Flow::Continue) => {}
                Ok(Flow::Exit) => {
                    outcome.exited = true;
                    break 'input;
                }
                Err(e) => {
                    outcome.failed += 1;
                    // Output before the error, as cassandra-cli's unbuffered streams show it.
                    let _ = session.flush();
                    if mode.line_numbers {
                        writeln!(err, "Line {} => {e}", outcome.ran)?;
                    } else {
                        writeln!(err, "{e}")?;
                    }
                    err.flush()?;
                    if mode.stop_at_error {
                        break 'input;
                    }
                }
            }
        }
        if eof {
            break;
        }
    }
    let _ = session.flush();
    Ok(outcome)
}

/// `~/.sibyl-cli-history`.
pub fn history_path() -> Option<PathBuf> {
    std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".sibyl-cli-history"))
}

/// True when standard input is a terminal (the interactive shell is used then).
pub fn stdin_is_terminal() -> bool {
    std::io::stdin().is_terminal()
}

/// The interactive shell: line editing and history (rustyline); errors are printed and the
/// session goes on.
pub fn run_interactive(session: &mut Session) -> Result<(), rustyline::error::ReadlineError> {
    use rustyline::error::ReadlineError;
    let mut editor = rustyline::DefaultEditor::new()?;
    let history = history_path();
    if let Some(h) = &history {
        // A missing history file is normal on first use.
        let _ = editor.load_history(h);
    }
    let mut splitter = Splitter::new();
    loop {
        let prompt = if splitter.is_pending() { "...\t".to_string() } else { session.prompt() };
        let line = match editor.readline(&prompt) {
            Ok(line) => line,
            Err(ReadlineError::Interrupted) => {
                splitter.reset();
                continue;
            }
            Err(ReadlineError::Eof) => break,
            Err(e) => return Err(e),
        };
        if !line.trim().is_empty() {
            let _ = editor.add_history_entry(line.as_str());
        }
        // `?` alone is a complete statement without `;`.
        let pieces = if !splitter.is_pending() && line.trim() == "?" {
            vec![Piece { line: 1, text: "?".into() }]
        } else {
            let mut pieces = splitter.feed(&line);
            pieces.extend(splitter.feed("\n"));
            pieces
        };
        let mut exit = false;
        for piece in pieces {
            match session.run(&piece.text) {
                Ok(Flow::Continue) => {}
                Ok(Flow::Exit) => {
                    exit = true;
                    break;
                }
                Err(e) => {
                    let _ = session.flush();
                    eprintln!("{e}");
                }
            }
        }
        if exit {
            break;
        }
    }
    if let Some(h) = &history {
        let _ = editor.save_history(h);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(script: &str) -> Vec<(usize, String)> {
        split_script(script).into_iter().map(|p| (p.line, p.text)).collect()
    }

    #[test]
    fn statements_split_on_semicolons_outside_strings() {
        assert_eq!(
            texts("use ks;\nset cf['k']['c'] = 'a;b';\nget cf['k'];"),
            vec![
                (1, "use ks;".to_string()),
                (2, "set cf['k']['c'] = 'a;b';".to_string()),
                (3, "get cf['k'];".to_string())
            ]
        );
    }

    #[test]
    fn multi_line_statements_and_comments() {
        let script = "# a comment line\n-- another; with a semicolon\ncreate column family users\n  with comparator=UTF8Type -- trailing\n  and gc_grace = 10;\n/* block; */ list users;\nshow keyspaces";
        assert_eq!(
            texts(script),
            vec![
                (3, "create column family users   with comparator=UTF8Type    and gc_grace = 10;".to_string()),
                (6, "list users;".to_string()),
                (7, "show keyspaces".to_string()),
            ]
        );
    }

    #[test]
    fn escaped_quotes_and_comment_markers_in_strings() {
        assert_eq!(
            texts(r"set cf['k']['c'] = 'it\'s -- not # a comment;';"),
            vec![(1, r"set cf['k']['c'] = 'it\'s -- not # a comment;';".to_string())]
        );
    }

    /// A writer whose bytes the test can read after handing it to a session.
    #[derive(Clone, Default)]
    struct Shared(std::rc::Rc<std::cell::RefCell<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.borrow_mut().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl Shared {
        fn text(&self) -> String {
            String::from_utf8_lossy(&self.0.borrow()).into_owned()
        }
    }

    /// Runs `script` on an unconnected session; returns the outcome, stdout and stderr.
    fn run_unconnected(script: &str, mode: RunMode) -> (BatchOutcome, String, String) {
        let (out, err) = (Shared::default(), Shared::default());
        let mut session = Session::new(Box::new(out.clone()));
        session.set_error_output(Box::new(err.clone()));
        let mut err_writer = err.clone();
        let outcome = run_script(&mut session, script.as_bytes(), mode, &mut err_writer).unwrap();
        (outcome, out.text(), err.text())
    }

    const SCRIPT: &str = "show keyspaces;\n-- a comment\n\nbogus\n  statement;\nget cf['k'];\nlist cf";

    #[test]
    fn file_mode_numbers_statements_and_stops_at_the_first_error() {
        let (outcome, out, err) = run_unconnected(SCRIPT, RunMode::file(false));
        assert_eq!(outcome, BatchOutcome { ran: 2, failed: 1, exited: false });
        // Not being connected is a message on standard output, not a failure (CliMain.isConnected).
        assert_eq!(out, "Not connected to a cassandra instance.\n");
        // cassandra-cli counts statements, not lines: `bogus statement` starts on line 4.
        assert_eq!(err, "Line 2 => Command not found: `bogus   statement`. Type 'help;' or '?' for help.\n");
        let (outcome, _, err) = run_unconnected(SCRIPT, RunMode::file(true));
        assert_eq!(outcome, BatchOutcome { ran: 4, failed: 1, exited: false });
        assert!(err.starts_with("Line 2 => "), "{err}");
    }

    #[test]
    fn batch_mode_stops_without_line_numbers_and_piped_input_goes_on() {
        let (outcome, _, err) = run_unconnected(SCRIPT, RunMode::batch(false));
        assert_eq!(outcome, BatchOutcome { ran: 2, failed: 1, exited: false });
        assert!(err.starts_with("Command not found: `bogus"), "{err}");
        let (outcome, out, err) =
            run_unconnected(&format!("{SCRIPT};\nnope;\nexit;\nshow keyspaces;"), RunMode::piped());
        assert_eq!(outcome, BatchOutcome { ran: 6, failed: 2, exited: true });
        assert_eq!(out.matches("Not connected to a cassandra instance.").count(), 3, "{out}");
        assert_eq!(err.lines().count(), 2, "{err}");
        assert!(err.lines().all(|l| l.starts_with("Command not found")), "{err}");
    }

    #[test]
    fn interactive_feeding_keeps_partial_statements() {
        let mut s = Splitter::new();
        assert!(s.feed("get cf\n").is_empty());
        assert!(s.is_pending());
        let done = s.feed("['k'];\n");
        assert_eq!(done, vec![Piece { line: 1, text: "get cf ['k'];".into() }]);
        assert!(!s.is_pending());
        assert_eq!(s.finish(), None);
    }
}
