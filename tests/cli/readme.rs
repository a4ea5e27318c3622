//! The README says what is true: its worked example is run as it is written, and its
//! output compared with what the commands print (issue 79, item 9: the example's table
//! said 54 entries where the build wrote 130).

use crate::util::*;

/// The worked example's commands (`$ textorigin ...`) and what follows each, from the
/// README's first code block under "## Worked example".
fn worked_example() -> Vec<(String, String)> {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let section = readme.split("\n## Worked example\n").nth(1).expect("a worked example");
    let block = section.split("```").nth(1).expect("its code block");
    let mut steps: Vec<(String, String)> = Vec::new();
    for line in block.lines().skip(1) {
        match line.strip_prefix("$ ") {
            Some(command) => steps.push((command.to_string(), String::new())),
            None => {
                let (_, out) = steps.last_mut().expect("output after a command");
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    steps
}

#[test]
fn the_readmes_worked_example_prints_what_it_says() {
    let data = tempfile::tempdir().unwrap();
    let steps = worked_example();
    assert!(steps.len() >= 3, "{steps:?}");
    for (command, expected) in steps {
        let words: Vec<&str> = command.split_whitespace().collect();
        assert_eq!(words[0], "textorigin", "{command}");
        let mut c = bin();
        c.current_dir(root());
        for w in &words[1..] {
            // `--data data` as written, in a fresh directory of the test's.
            if *w == "data" {
                c.arg(data.path().join("data"));
            } else {
                c.arg(w);
            }
        }
        let out = c.output().unwrap();
        assert!(out.status.success(), "{command}: {}", String::from_utf8_lossy(&out.stderr));
        let printed = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
        let trim = |s: &str| s.lines().map(str::trim_end).filter(|l| !l.is_empty()).collect::<Vec<_>>().join("\n");
        assert_eq!(trim(&printed), trim(&expected), "`{command}` printed otherwise than the README says");
    }
}
