-- The one truncation rule of the standard tools: an output holds at most MAX_LINES lines and MAX_BYTES bytes. When
-- there is more, its head and its tail are kept (the head gets two thirds) and a note in the middle says how much was
-- left out and how to see more. A line longer than what is left is cut at a UTF-8 character boundary.
--
--   local truncate = require("truncate")
--   local text, info = truncate.text(output, { more = "narrow the pattern, or pass path" })
--   -- info = { truncated = true/false, lines = <lines in>, bytes = <bytes in>, cut_lines = n, cut_bytes = n }

local M = {}

M.MAX_LINES = 2000
M.MAX_BYTES = 50 * 1024

-- `s` cut to at most `n` bytes, never inside a UTF-8 sequence.
local function cut_utf8(s, n)
  if #s <= n then return s end
  local i = n
  -- Back off continuation bytes (10xxxxxx) and the lead byte of the sequence they belong to.
  while i > 0 and s:byte(i + 1) and s:byte(i + 1) >= 0x80 and s:byte(i + 1) < 0xC0 do i = i - 1 end
  return s:sub(1, i)
end
M.cut_utf8 = cut_utf8

-- The lines of `s` (without their "\n"), and whether it ended with a newline.
local function split_lines(s)
  local lines, pos, n = {}, 1, #s
  while pos <= n do
    local nl = s:find("\n", pos, true)
    if not nl then
      lines[#lines + 1] = s:sub(pos)
      break
    end
    lines[#lines + 1] = s:sub(pos, nl - 1)
    pos = nl + 1
  end
  return lines, n > 0 and s:sub(-1) == "\n"
end
M.split_lines = split_lines

local function plural(n, word)
  return string.format("%d %s%s", n, word, n == 1 and "" or "s")
end

-- `s` within the limits (see the module comment); `opts.max_lines`, `opts.max_bytes` change them, `opts.more` is the
-- hint that ends the note ("read with offset=..." , "narrow the pattern").
function M.text(s, opts)
  opts = opts or {}
  local max_lines = opts.max_lines or M.MAX_LINES
  local max_bytes = opts.max_bytes or M.MAX_BYTES
  local lines, trailing_nl = split_lines(s)
  local info = { truncated = false, lines = #lines, bytes = #s, cut_lines = 0, cut_bytes = 0 }
  if #lines <= max_lines and #s <= max_bytes then return s, info end

  local head_lines, head_bytes = math.floor(max_lines * 2 / 3), math.floor(max_bytes * 2 / 3)
  local head, used = {}, 0
  local i = 1
  while i <= #lines and #head < head_lines do
    local line = lines[i]
    local room = head_bytes - used
    if #line + 1 > room then
      if #head == 0 then
        head[1] = cut_utf8(line, math.max(0, room - 4)) .. " …"
        used = used + #head[1] + 1
        i = i + 1
      end
      break
    end
    head[#head + 1] = line
    used = used + #line + 1
    i = i + 1
  end
  local tail, tail_used = {}, 0
  local tail_lines = max_lines - #head
  local tail_bytes = max_bytes - used
  local j = #lines
  while j >= i and #tail < tail_lines do
    local line = lines[j]
    if #line + 1 > tail_bytes - tail_used then break end
    table.insert(tail, 1, line)
    tail_used = tail_used + #line + 1
    j = j - 1
  end
  local cut_lines = j - i + 1
  local cut_bytes = #s - used - tail_used
  if cut_bytes < 0 then cut_bytes = 0 end
  info.truncated, info.cut_lines, info.cut_bytes = true, cut_lines, cut_bytes
  local note = string.format("[... %s (%s) left out of %s (%s)%s ...]",
    plural(cut_lines, "line"), plural(cut_bytes, "byte"), plural(#lines, "line"), plural(#s, "byte"),
    opts.more and ("; " .. opts.more) or "")
  local parts = { table.concat(head, "\n"), note }
  if #tail > 0 then parts[#parts + 1] = table.concat(tail, "\n") end
  local out = table.concat(parts, "\n")
  if trailing_nl and #tail > 0 then out = out .. "\n" end
  return out, info
end

return M
