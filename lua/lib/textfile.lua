-- Text or binary, and line helpers, shared by the standard tools that read files (grep, edit).

local M = {}

local SNIFF_WINDOW = 8 * 1024

-- Binary when the first 8 KiB hold a NUL byte (as git and ripgrep decide). Invalid UTF-8 alone is still text.
function M.is_binary(data)
  return data:sub(1, SNIFF_WINDOW):find("\0", 1, true) ~= nil
end

-- 1-based line number of byte offset `pos` in `s` (`pos` itself on that line).
function M.line_at(s, pos)
  local _, n = s:sub(1, pos - 1):gsub("\n", "")
  return n + 1
end

-- A line cut for display: at most `max` bytes (UTF-8 safe), with how much was left out.
function M.shorten(line, max)
  if #line <= max then return line end
  local truncate = require("truncate")
  return truncate.cut_utf8(line, max) .. string.format(" … [%d more bytes]", #line - max)
end

-- Whether `s` uses CRLF line endings (more CRLF than bare LF).
function M.uses_crlf(s)
  local _, crlf = s:gsub("\r\n", "")
  local _, lf = s:gsub("\n", "")
  return crlf > 0 and crlf * 2 >= lf
end

return M
