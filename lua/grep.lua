-- grep: lines of the workspace's files that match a regular expression (or a literal string), with file names, line
-- numbers and context lines. It searches one file or a tree (walked as find walks it: .gitignore honoured, `.git`
-- skipped, symbolic links not followed, at most 20,000 entries); `glob` filters the file names. Binary files (a NUL in
-- the first 8 KiB) and files over 16 MiB are skipped and counted. Matching lines longer than 500 bytes are cut.

local glob = require("glob")
local regex = require("regex")
local textfile = require("textfile")
local truncate = require("truncate")
local walk = require("walk")

local MAX_FILE_BYTES = 16 * 1024 * 1024
local MAX_LINE_SHOWN = 500
local MAX_COMPLEX_LINES = 3

return {
  name = "grep",
  description = "Search file contents in the workspace with a regular expression (or a literal string): prints "
    .. "path:line: text for each matching line, with optional context lines. Searches `path` (a file or a directory, "
    .. "default the root), honouring .gitignore; `glob` filters file names (\"*.ts\"). Regex syntax: . [a-z] \\d \\w "
    .. "\\s \\b ^ $ ( ) | * + ? {n,m}.",
  capabilities = { "list_dir", "read_file", "stat" },
  parameters = {
    type = "object",
    properties = {
      pattern = { type = "string", description = "Regular expression (or, with literal = true, plain text) to find." },
      path = { type = "string", description = "File or directory to search, relative to the workspace. Default: the root." },
      glob = { type = "string", description = "Only files whose name (or, with /, path) matches this glob." },
      literal = { type = "boolean", description = "Treat pattern as plain text. Default false." },
      ignore_case = { type = "boolean", description = "Match regardless of case. Default false." },
      context = { type = "integer", minimum = 0, maximum = 20, description = "Lines of context before and after each match. Default 0." },
      limit = { type = "integer", minimum = 1, maximum = 2000, description = "Most matching lines shown. Default 100." },
      all = { type = "boolean", description = "Also search what .gitignore excludes. Default false." },
    },
    required = { "pattern" },
    additionalProperties = false,
  },
  handler = function(args)
    local pattern = args.pattern
    if type(pattern) ~= "string" or pattern == "" then return nil, "grep: 'pattern' must be a non-empty string" end
    local root = args.path
    if root == nil or root == "" then root = "." end
    local context = math.tointeger(args.context) or 0
    local limit = math.tointeger(args.limit) or 100
    local ignore_case = args.ignore_case == true

    -- Text every match contains (a literal pattern, or the longest plain run of a regex): a file without it is
    -- skipped before it is split into lines, which is most of the cost.
    local required, required_lower = nil, ignore_case
    local find_in
    if args.literal then
      local needle = ignore_case and pattern:lower() or pattern
      required = needle
      find_in = function(line)
        return (ignore_case and line:lower() or line):find(needle, 1, true) ~= nil
      end
    else
      local re, err = regex.compile(pattern, { ignore_case = ignore_case })
      if not re then return nil, "grep: invalid regular expression: " .. err end
      required, required_lower = re.literal, re.ignore_case
      find_in = function(line)
        local from, _, problem = regex.find(re, line)
        if problem then return false, problem end
        return from ~= nil
      end
    end
    local file_filter = args.glob and glob.compile(args.glob)
    local filter_by_path = args.glob and args.glob:find("/", 1, true) ~= nil

    local out, shown, matched_lines, matched_files = {}, 0, 0, 0
    local skipped_binary, skipped_big, too_complex = 0, 0, 0
    local files = 0
    -- The whole search stops (with a note) at the walk's time limit, or when the pattern backtracks too much on
    -- MAX_COMPLEX_LINES lines: past that it would only spend the call's budget failing the same way.
    local deadline = os.time() + walk.SECONDS
    local stopped_by

    -- Search one file; returns "stop" when the whole search must end.
    local function search(path, size)
      if stopped_by then return "stop" end
      if size and size > MAX_FILE_BYTES then
        skipped_big = skipped_big + 1
        return
      end
      local data = panto.read_file(path)
      if not data then return end
      files = files + 1
      if textfile.is_binary(data) then
        skipped_binary = skipped_binary + 1
        return
      end
      if required and not (required_lower and data:lower() or data):find(required, 1, true) then return end
      local lines = truncate.split_lines(data)
      local hits = {}
      for i, line in ipairs(lines) do
        if line:sub(-1) == "\r" then line = line:sub(1, -2); lines[i] = line end
        local ok, problem = find_in(line)
        if problem then
          too_complex = too_complex + 1
          if too_complex >= MAX_COMPLEX_LINES then stopped_by = "complex" end
        end
        if ok then hits[#hits + 1] = i end
        if i % 256 == 0 and os.time() > deadline then stopped_by = "time" end
        if stopped_by then break end
      end
      if #hits == 0 then return end
      matched_files = matched_files + 1
      matched_lines = matched_lines + #hits
      local last = 0
      for _, n in ipairs(hits) do
        if shown >= limit then return end
        local from, to = math.max(1, n - context), math.min(#lines, n + context)
        if context > 0 and last > 0 and from > last + 1 then out[#out + 1] = "--" end
        for k = math.max(from, last + 1), to do
          local sep = k == n and ":" or "-"
          out[#out + 1] = string.format("%s%s%d%s %s", path, sep, k, sep, textfile.shorten(lines[k], MAX_LINE_SHOWN))
        end
        last = to
        shown = shown + 1
      end
    end

    local st, err = panto.stat(root)
    if not st then return nil, err end
    local stats
    if st.type == "file" then
      search(root, st.size)
    elseif st.type == "directory" then
      local prefix = root == "." and "" or (root:gsub("/+$", "") .. "/")
      stats = walk.tree(root, { all = args.all == true, max_entries = 20000 }, function(path, e)
        if e.type ~= "file" then return end
        if file_filter then
          local subject = filter_by_path and path:sub(#prefix + 1) or e.name
          if not file_filter(subject) then return end
        end
        return search(path, e.size)
      end)
    else
      return nil, root .. ": not a regular file or directory"
    end

    local notes = {}
    if matched_lines > shown then
      notes[#notes + 1] = string.format("[%d matching lines in %d files; %d shown: narrow the pattern or the path, or raise limit]",
        matched_lines, matched_files, shown)
    end
    if skipped_binary > 0 then notes[#notes + 1] = string.format("[%d binary files skipped]", skipped_binary) end
    if skipped_big > 0 then
      notes[#notes + 1] = string.format("[%d files over %d MiB skipped: read them in parts with read]", skipped_big,
        MAX_FILE_BYTES // (1024 * 1024))
    end
    if stopped_by == "complex" then
      notes[#notes + 1] = string.format("[the search stopped: %s on %d lines; simplify the pattern (or use literal)]",
        regex.TOO_COMPLEX, too_complex)
    elseif too_complex > 0 then
      notes[#notes + 1] = string.format("[%d lines not checked: %s; simplify the pattern]", too_complex, regex.TOO_COMPLEX)
    end
    if stopped_by == "time" then
      notes[#notes + 1] = string.format("[the search stopped after %d s, in %d files; search a smaller directory (path) or narrow glob]",
        walk.SECONDS, files)
    end
    local stopped = stats and walk.stopped_note(stats)
    if stopped then notes[#notes + 1] = stopped end
    if stats then for _, e in ipairs(stats.errors) do notes[#notes + 1] = "[not searched: " .. e .. "]" end end
    if matched_lines == 0 then
      table.insert(out, 1, string.format("no match for %s in %s (%d files searched%s)", pattern, root, files,
        (args.all or st.type == "file") and "" or "; .gitignore'd files left out"))
    end
    for _, n in ipairs(notes) do out[#out + 1] = n end
    local text = truncate.text(table.concat(out, "\n"), { more = "narrow the pattern or the path, or use glob" })
    return { text = text, meta = { pattern = pattern, path = root, matches = matched_lines, files = matched_files } }
  end,
}
