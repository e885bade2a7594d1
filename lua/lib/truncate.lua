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
-- hint that ends the note ("read with offset=..." , "narrow the pattern"). The cost stays near one pass over `s`
-- however many lines it has: the head is read forward, the tail backward from a reversed copy of the last bytes.
function M.text(s, opts)
  opts = opts or {}
  local max_lines = opts.max_lines or M.MAX_LINES
  local max_bytes = opts.max_bytes or M.MAX_BYTES
  local n = #s
  local trailing_nl = n > 0 and s:byte(n) == 10
  local _, newlines = s:gsub("\n", "")
  local total = newlines + ((n > 0 and not trailing_nl) and 1 or 0)
  local info = { truncated = false, lines = total, bytes = n, cut_lines = 0, cut_bytes = 0 }
  if total <= max_lines and n <= max_bytes then return s, info end

  -- The head: whole lines from the start while they fit in two thirds of the limits.
  local head_lines, head_bytes = math.floor(max_lines * 2 / 3), math.floor(max_bytes * 2 / 3)
  local head, used, pos = {}, 0, 1
  while pos <= n and #head < head_lines do
    local nl = s:find("\n", pos, true)
    local stop = nl and nl - 1 or n
    if stop - pos + 2 > head_bytes - used then
      if #head == 0 then
        -- A first line longer than the head: its start, cut at a character boundary.
        head[1] = cut_utf8(s:sub(pos, stop), math.max(0, head_bytes - 4)) .. " …"
        used = #head[1] + 1
        pos = (nl or n) + 1
      end
      break
    end
    head[#head + 1] = s:sub(pos, stop)
    used = used + stop - pos + 2
    pos = (nl or n) + 1
  end

  -- The tail: whole lines from the end while they fit in what is left, found in the last bytes only.
  local tail, tail_used = {}, 0
  local tail_lines, tail_room = max_lines - #head, max_bytes - used
  local last = trailing_nl and n - 1 or n
  if last >= pos and tail_lines > 0 and tail_room > 0 then
    local lo = math.max(pos, last - tail_room + 2)
    local rev = s:sub(lo, last):reverse()
    local rpos = 1
    while #tail < tail_lines do
      local nl = rev:find("\n", rpos, true)
      local len = (nl or #rev + 1) - rpos
      -- Without a newline the line reaches back to `lo`: whole only when a line starts there.
      if not nl and not (lo == pos or s:byte(lo - 1) == 10) then break end
      if len + 1 > tail_room - tail_used then break end
      tail[#tail + 1] = rev:sub(rpos, rpos + len - 1):reverse()
      tail_used = tail_used + len + 1
      if not nl then break end
      rpos = nl + 1
    end
  end
  local ordered = {}
  for k = #tail, 1, -1 do ordered[#ordered + 1] = tail[k] end

  local cut_lines = total - #head - #tail
  local cut_bytes = math.max(0, n - used - tail_used)
  info.truncated, info.cut_lines, info.cut_bytes = true, cut_lines, cut_bytes
  local note = string.format("[... %s (%s) left out of %s (%s)%s ...]",
    plural(cut_lines, "line"), plural(cut_bytes, "byte"), plural(total, "line"), plural(n, "byte"),
    opts.more and ("; " .. opts.more) or "")
  local parts = { table.concat(head, "\n"), note }
  if #ordered > 0 then parts[#parts + 1] = table.concat(ordered, "\n") end
  local out = table.concat(parts, "\n")
  if trailing_nl and #ordered > 0 then out = out .. "\n" end
  return out, info
end

return M
