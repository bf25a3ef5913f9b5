// `reckon admin archive`: retention by hand (storage/archive/archiver.h).
//
//   reckon admin archive JOURNAL --older-than AGE --out FILE|DIR [--max-runs N]
//     One archive pass: finished runs (completed, failed, cancelled) last updated more than AGE
//     ago, whose outbox messages were all delivered, are written to an archive file (FILE, or
//     a new reckon-archive-<time>.jsonl.gz in DIR) and then deleted from the journal. Opens the
//     journal as its owner: refused while a server holds it (use `reckon server --retention`
//     there). Prints one line per run archived and a summary; says so when --max-runs left
//     more for another pass. Exit 0 (also when nothing was old enough), 1 on a failure (the
//     message says what was archived and what is still in the journal), 2 for bad usage.
//
//   reckon admin archive --list FILE [--workflow ID]
//     Reads an archive back (docs/JOURNAL_FORMAT.md, "Archive files"): its header and one line
//     per run; with --workflow, the events of that workflow's runs. Exit 1 for an incomplete
//     or damaged file.
#pragma once

#include <CLI/CLI.hpp>

#include "reckon/api/cli/command.h"

namespace reckon::cli {

// Registers `archive` under `admin`. `env` must outlive `admin`.
void AddArchiveCommand(CLI::App& admin, CommandEnv& env);

}  // namespace reckon::cli
