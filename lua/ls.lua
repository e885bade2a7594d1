-- ls: the entries of one directory of the workspace, sorted by name. Directories end in "/", symbolic links in "@"
-- (with what they point to not followed); files show their size. Names the secrets denylist matches are left out by
-- the host. At most `limit` entries (default 500) are listed; the rest is counted.

local truncate = require("truncate")

local function size(n)
  if n == nil then return "" end
  if n < 1024 then return string.format("%d B", n) end
  if n < 1024 * 1024 then return string.format("%.1f KB", n / 1024) end
  return string.format("%.1f MB", n / (1024 * 1024))
end

return {
  name = "ls",
  description = "List a directory of the workspace (default: its root): entries sorted by name, directories "
    .. "ending in /, symbolic links in @, file sizes. Use find to search a tree, read to see a file.",
  capabilities = { "list_dir" },
  parameters = {
    type = "object",
    properties = {
      path = { type = "string", description = "Directory, relative to the workspace root. Default: the root." },
      limit = { type = "integer", minimum = 1, maximum = 5000, description = "Most entries listed. Default 500." },
    },
    additionalProperties = false,
  },
  handler = function(args)
    local path = args.path
    if path == nil or path == "" then path = "." end
    local limit = math.tointeger(args.limit) or 500
    local entries, err = panto.list_dir(path, { details = true })
    if not entries then return nil, err end
    if #entries == 0 then
      return { text = path .. ": (empty directory)", meta = { path = path, entries = 0 } }
    end
    local lines = {}
    for i, e in ipairs(entries) do
      if i > limit then break end
      if e.type == "directory" then lines[#lines + 1] = e.name .. "/"
      elseif e.type == "symlink" then lines[#lines + 1] = e.name .. "@"
      elseif e.type == "file" then lines[#lines + 1] = string.format("%s  (%s)", e.name, size(e.size))
      else lines[#lines + 1] = e.name .. "  (" .. e.type .. ")" end
    end
    if #entries > limit then
      lines[#lines + 1] = string.format("[%d more entries not listed; pass a larger limit, or use find with a pattern]",
        #entries - limit)
    end
    local text = truncate.text(table.concat(lines, "\n"), { more = "use find with a pattern" })
    return { text = text, meta = { path = path, entries = #entries } }
  end,
}
