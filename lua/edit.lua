-- edit: exact replacements in one file of the workspace. Each edit's `old_text` must appear exactly once (unless
-- `replace_all`); otherwise nothing is written and the error says what matched (how many times, on which lines) or
-- where the closest text is. Several edits in one call are matched against the file as it was, must not overlap, and
-- are written together (atomically). A file with CRLF line endings keeps them; the texts may use either.

local textfile = require("textfile")
local truncate = require("truncate")

local MAX_SHOWN_LINES = 12
-- Larger files are refused before they are read (a model edits source files; a 100 MB log is not one).
local MAX_FILE_BYTES = 16 * 1024 * 1024

-- Every start position of `needle` in `hay` (plain).
local function positions(hay, needle)
  local at, i = {}, 1
  while true do
    local s = hay:find(needle, i, true)
    if not s then return at end
    at[#at + 1] = s
    i = s + #needle
  end
end

-- Where text like `old` might be: a line of the file equal to `old`'s first non-blank line once spaces are ignored.
local function closest(content, old)
  local first = old:match("[^\n]*%S[^\n]*")
  if not first then return nil end
  local want = first:gsub("%s+", "")
  local n = 0
  for line in (content .. "\n"):gmatch("([^\n]*)\n") do
    n = n + 1
    if line:gsub("%s+", "") == want then
      return string.format("a line like its first line is at line %d, with other spacing: %q", n, line)
    end
  end
  return nil
end

local function lines_of(s)
  return (truncate.split_lines(s))
end

-- A short -/+ view of one replacement at `line`.
local function diff(line, old, new)
  local out = { string.format("@@ line %d @@", line) }
  local o, n = lines_of(old), lines_of(new)
  for i, l in ipairs(o) do
    if i > MAX_SHOWN_LINES then out[#out + 1] = string.format("-… (%d more lines)", #o - MAX_SHOWN_LINES) break end
    out[#out + 1] = "-" .. textfile.shorten(l, 200)
  end
  for i, l in ipairs(n) do
    if i > MAX_SHOWN_LINES then out[#out + 1] = string.format("+… (%d more lines)", #n - MAX_SHOWN_LINES) break end
    out[#out + 1] = "+" .. textfile.shorten(l, 200)
  end
  return table.concat(out, "\n")
end

return {
  name = "edit",
  description = "Change part of a file by exact replacement: each edit's old_text must appear exactly once in the "
    .. "file (include enough surrounding lines to make it unique) and is replaced by new_text. Several edits in one "
    .. "call apply together or not at all. Use write to create a file or replace it whole.",
  capabilities = { "read_file", "write_file", "stat" },
  parameters = {
    type = "object",
    properties = {
      path = { type = "string", description = "File to edit, relative to the workspace root." },
      old_text = { type = "string", description = "Text to replace (for a single edit)." },
      new_text = { type = "string", description = "Replacement (for a single edit)." },
      edits = {
        type = "array",
        description = "Several edits, matched against the file as it is now.",
        items = {
          type = "object",
          properties = {
            old_text = { type = "string" },
            new_text = { type = "string" },
            replace_all = { type = "boolean", description = "Replace every occurrence. Default false." },
          },
          required = { "old_text", "new_text" },
          additionalProperties = false,
        },
      },
      replace_all = { type = "boolean", description = "Single edit: replace every occurrence. Default false." },
    },
    required = { "path" },
    additionalProperties = false,
  },
  handler = function(args)
    local path = args.path
    if type(path) ~= "string" or path == "" then return nil, "edit: 'path' must be a non-empty string" end
    local edits = {}
    if args.edits ~= nil then
      if args.old_text ~= nil or args.new_text ~= nil then
        return nil, "edit: pass either old_text/new_text or edits, not both"
      end
      for i, e in ipairs(args.edits) do edits[i] = e end
    elseif args.old_text ~= nil then
      edits[1] = { old_text = args.old_text, new_text = args.new_text, replace_all = args.replace_all }
    end
    if #edits == 0 then return nil, "edit: nothing to do: pass old_text and new_text, or edits" end

    local st, serr = panto.stat(path)
    if not st then return nil, serr end
    if st.type ~= "file" then return nil, path .. ": not a regular file (edit changes text files)" end
    if st.size > MAX_FILE_BYTES then
      return nil, string.format("%s: %d bytes, over edit's %d MiB limit; use bash (sed) or write for a file this big",
        path, st.size, MAX_FILE_BYTES // (1024 * 1024))
    end
    local data, err = panto.read_file(path)
    if not data then return nil, err end
    if textfile.is_binary(data) then return nil, path .. ": a binary file; edit changes text files" end
    local crlf = textfile.uses_crlf(data)
    local content = crlf and data:gsub("\r\n", "\n") or data

    -- Find every edit in the file as it is; all must be found (and unique) before anything is written.
    local spans = {}
    for i, e in ipairs(edits) do
      local label = #edits > 1 and string.format("edit %d", i) or "edit"
      if type(e.new_text) ~= "string" then return nil, label .. ": new_text must be a string" end
      local old = crlf and e.old_text:gsub("\r\n", "\n") or e.old_text
      local new = crlf and e.new_text:gsub("\r\n", "\n") or e.new_text
      if old == "" then return nil, label .. ": old_text is empty (use write to create a file)" end
      if old == new then return nil, label .. ": old_text and new_text are the same; nothing would change" end
      local at = positions(content, old)
      if #at == 0 then
        local hint = closest(content, old)
        return nil, string.format("%s: old_text was not found in %s%s; nothing was written. Read the file and copy "
          .. "the text exactly (spaces, indentation and line breaks count).", label, path, hint and ("; " .. hint) or "")
      end
      if #at > 1 and not e.replace_all then
        local where = {}
        for k, p in ipairs(at) do
          if k > 10 then where[#where + 1] = "…" break end
          where[#where + 1] = tostring(textfile.line_at(content, p))
        end
        return nil, string.format("%s: old_text appears %d times in %s (lines %s); nothing was written. Include more "
          .. "surrounding lines to make it unique, or set replace_all.", label, #at, path, table.concat(where, ", "))
      end
      for _, p in ipairs(at) do
        spans[#spans + 1] = { from = p, to = p + #old - 1, new = new, old = old, edit = i }
      end
    end
    table.sort(spans, function(a, b) return a.from < b.from end)
    for k = 2, #spans do
      if spans[k].from <= spans[k - 1].to then
        return nil, string.format("edits %d and %d overlap in %s; nothing was written. Merge them into one edit.",
          spans[k - 1].edit, spans[k].edit, path)
      end
    end

    local parts, pos, views = {}, 1, {}
    local added, removed = 0, 0
    for _, sp in ipairs(spans) do
      parts[#parts + 1] = content:sub(pos, sp.from - 1)
      parts[#parts + 1] = sp.new
      pos = sp.to + 1
      views[#views + 1] = diff(textfile.line_at(content, sp.from), sp.old, sp.new)
      removed = removed + #lines_of(sp.old)
      added = added + #lines_of(sp.new)
    end
    parts[#parts + 1] = content:sub(pos)
    local result = table.concat(parts)
    if crlf then result = result:gsub("\n", "\r\n") end
    local ok, werr = panto.write_file(path, result)
    if not ok then return nil, werr end
    local text = string.format("Edited %s: %d replacement%s (+%d -%d lines)%s\n%s", path, #spans,
      #spans == 1 and "" or "s", added, removed, crlf and "; CRLF line endings kept" or "", table.concat(views, "\n"))
    return { text = truncate.text(text), meta = { path = path, replacements = #spans, added = added, removed = removed } }
  end,
}
