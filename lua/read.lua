-- read: show a file of the workspace to the model.
-- Text comes back as numbered lines (offset/limit page through long files); images and PDFs come back as
-- attachments (raw bytes; the agent detects, resizes and encodes them). See docs/lua-tools.md.

local MAX_LINES = 2000
local MAX_BYTES = 50 * 1024
local MAX_LINE_CHARS = 2000
local SNIFF_WINDOW = 64 * 1024

local ATTACHABLE = {
  ["image/png"] = "Image",
  ["image/jpeg"] = "Image",
  ["image/gif"] = "Image",
  ["image/webp"] = "Image",
  ["image/bmp"] = "Image",
  ["application/pdf"] = "PDF",
}

local function basename(path)
  return path:match("([^/\\]+)[/\\]*$") or path
end

-- Text or binary? NUL bytes mean binary; valid UTF-8 means text; otherwise (a legacy 8-bit encoding, or noise)
-- text only when control characters are rare.
local function looks_like_text(data)
  local head = data:sub(1, SNIFF_WINDOW)
  if head:find("\0", 1, true) then return false end
  local ok, bad = utf8.len(head)
  if ok or (#data > SNIFF_WINDOW and bad > #head - 4) then return true end
  local _, controls = head:gsub("[\1-\8\11\14-\26\28-\31\127]", "")
  return controls * 20 < #head
end

local function read_text(path, data, offset, limit)
  if #data == 0 then
    return { text = path .. ": (empty file)", meta = { path = path, lines = 0 } }
  end
  local out, bytes = {}, 0
  local line_no, pos, len = 0, 1, #data
  local first, last, cut_by_bytes = nil, nil, false
  while pos <= len do
    local nl = data:find("\n", pos, true)
    local stop = nl and nl - 1 or len
    line_no = line_no + 1
    if line_no >= offset and not last then
      if #out >= limit then
        last = line_no - 1
      else
        local line = data:sub(pos, stop)
        if line:sub(-1) == "\r" then line = line:sub(1, -2) end
        if #line > MAX_LINE_CHARS then
          line = line:sub(1, MAX_LINE_CHARS) .. string.format(" [... line cut: %d more bytes]", #line - MAX_LINE_CHARS)
        end
        local entry = string.format("%6d\t%s", line_no, line)
        -- `bytes` counts a newline after each kept entry: the text with this entry is bytes + #entry long.
        if bytes + #entry > MAX_BYTES and #out > 0 then
          last, cut_by_bytes = line_no - 1, true
        else
          out[#out + 1] = entry
          bytes = bytes + #entry + 1
          first = first or line_no
        end
      end
    end
    pos = (nl or len) + 1
  end
  local total = line_no
  if offset > total then
    return nil, string.format("%s: offset %d is past the end of the file (%d lines)", path, offset, total)
  end
  last = last or total
  local text = table.concat(out, "\n")
  if last < total then
    text = text .. string.format(
      "\n\n[%s: showing lines %d-%d of %d%s. Call read with offset=%d to read on.]",
      path, first, last, total, cut_by_bytes and " (output capped at 50 KB)" or "", last + 1)
  end
  return { text = text, meta = { path = path, offset = first, lines = last - first + 1, total_lines = total } }
end

return {
  capabilities = { "read_file", "stat" },
  name = "read",
  description = "Read a file in the workspace. Text files come back as numbered lines (at most 2000 lines or 50 KB "
    .. "per call; use offset and limit to page through longer files). Images (PNG, JPEG, GIF, WebP, BMP) and PDFs "
    .. "come back as attachments you can see.",
  parameters = {
    type = "object",
    properties = {
      path = { type = "string", description = "Path of the file, relative to the workspace root." },
      offset = { type = "integer", minimum = 1, description = "Text files: first line to return (1-based). Default 1." },
      limit = {
        type = "integer",
        minimum = 1,
        description = "Text files: maximum number of lines to return. Default and maximum 2000.",
      },
    },
    required = { "path" },
    additionalProperties = false,
  },
  handler = function(args)
    local path = args.path
    if type(path) ~= "string" or path == "" then return nil, "read: 'path' must be a non-empty string" end
    local offset = math.tointeger(args.offset) or 1
    local limit = math.tointeger(args.limit) or MAX_LINES
    if offset < 1 then return nil, "read: 'offset' must be 1 or more" end
    if limit < 1 then return nil, "read: 'limit' must be 1 or more" end
    if limit > MAX_LINES then limit = MAX_LINES end

    local st, err = panto.stat(path)
    if not st then return nil, err end
    if st.type == "directory" then
      return nil, path .. ": is a directory, not a file (read shows files; pass a file path inside it)"
    end
    if st.type ~= "file" then return nil, path .. ": not a regular file" end

    local data, rerr = panto.read_file(path)
    if not data then return nil, rerr end

    local media_type = panto.sniff(data)
    local kind = media_type and ATTACHABLE[media_type]
    if kind then
      return {
        text = string.format("%s file %s (%s, %d bytes)", kind, path, media_type, #data),
        attachments = { { data = data, media_type = media_type, name = basename(path) } },
        meta = { path = path },
      }
    end
    if (media_type and media_type ~= "image/svg+xml") or not looks_like_text(data) then
      return nil, string.format(
        "%s: binary file (%s, %d bytes); read shows text files, images (PNG, JPEG, GIF, WebP, BMP) and PDFs",
        path, media_type or "unknown binary", #data)
    end
    return read_text(path, data, offset, limit)
  end,
}
