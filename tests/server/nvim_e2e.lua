-- Headless Neovim 0.11 end-to-end check, run by test_neovim_e2e.py:
--   nvim --clean --headless -u nvim_e2e.lua kernel.py
-- Starts flydsl-ls through editors/nvim/lsp/flydsl_ls.lua, waits for its diagnostics,
-- applies the FLY101 quick fix through vim.lsp.buf.code_action, writes the file, hovers a
-- deprecated API, runs fix-all on $FLYDSL_E2E_FIXALL, runs :FlydslCompile and :FlydslShowIsa
-- on $FLYDSL_E2E_COMPILE, and reports what happened as JSON in $FLYDSL_E2E_RESULT.
local result = { steps = {} }
local function note(step) table.insert(result.steps, step) end

local function finish(ok, err)
  result.ok = ok
  result.error = err
  local f = assert(io.open(vim.env.FLYDSL_E2E_RESULT, 'w'))
  f:write(vim.json.encode(result))
  f:close()
  vim.cmd('qall!')
end

vim.opt.runtimepath:prepend(vim.env.FLYDSL_E2E_RUNTIME)
vim.cmd('filetype on')
vim.lsp.config('flydsl_ls', {
  cmd = { vim.env.FLYDSL_E2E_PYTHON, '-m', 'flydsl_ls', 'serve' },
})
vim.lsp.enable('flydsl_ls')

local function run()
  local bufnr = vim.api.nvim_get_current_buf()
  local attached = vim.wait(60000, function()
    return #vim.lsp.get_clients({ bufnr = bufnr, name = 'flydsl_ls' }) > 0
  end, 50)
  if not attached then return finish(false, 'flydsl_ls never attached') end
  note('attached')

  local target
  local got = vim.wait(60000, function()
    for _, d in ipairs(vim.diagnostic.get(bufnr)) do
      if d.code == 'FLY101' and d.source == 'flydsl-ls' and d.severity == vim.diagnostic.severity.WARN then
        local line = vim.api.nvim_buf_get_lines(bufnr, d.lnum, d.lnum + 1, false)[1]
        if line:find('_AV(tid)', 1, true) then target = d return true end
      end
    end
    return false
  end, 50)
  if not got then return finish(false, 'no FLY101 diagnostic') end
  result.diagnostics = #vim.diagnostic.get(bufnr)
  result.diagnostic = { lnum = target.lnum, col = target.col, message = target.message }
  note('diagnostics')

  vim.api.nvim_win_set_cursor(0, { target.lnum + 1, target.col })
  local before = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  local titles = {}
  vim.lsp.buf.code_action({
    apply = true,
    filter = function(action)
      table.insert(titles, action.title)
      return action.title == 'Remove the ArithValue wrapper' and action.isPreferred == true
    end,
  })
  local changed = vim.wait(60000, function()
    local now = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
    return table.concat(now, '\n') ~= table.concat(before, '\n')
  end, 50)
  result.titles = titles
  if not changed then return finish(false, 'the quick fix did not change the buffer') end
  note('applied')

  vim.cmd('write')
  note('written')

  -- Hover on a deprecated API (fx.get, FLY901): Neovim's own hover float, once the
  -- findings of the fixed text are in (FLY901 on fx.get's new line), as a user would.
  local get_lnum
  for lnum, line in ipairs(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)) do
    local col = line:find('fx.get(', 1, true)
    if col then vim.api.nvim_win_set_cursor(0, { lnum, col + 2 }) get_lnum = lnum - 1 break end
  end
  vim.wait(30000, function()
    for _, d in ipairs(vim.diagnostic.get(bufnr, { lnum = get_lnum })) do
      if d.code == 'FLY901' then return true end
    end
    return false
  end, 50)
  vim.lsp.buf.hover()
  local hover
  vim.wait(30000, function()
    for _, win in ipairs(vim.api.nvim_list_wins()) do
      if vim.api.nvim_win_get_config(win).relative ~= '' then
        hover = table.concat(vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(win), 0, -1, false), '\n')
        return true
      end
    end
    return false
  end, 50)
  if not hover then return finish(false, 'no hover window') end
  result.hover = hover
  note('hover')
  vim.cmd('fclose!')

  -- Fix-all on a second file (the legacy example), as a code action of kind source.fixAll.
  vim.cmd('edit ' .. vim.fn.fnameescape(vim.env.FLYDSL_E2E_FIXALL))
  local fixbuf = vim.api.nvim_get_current_buf()
  if not vim.wait(60000, function() return #vim.diagnostic.get(fixbuf) > 0 end, 50) then
    return finish(false, 'no diagnostics in the fix-all file')
  end
  local unfixed = table.concat(vim.api.nvim_buf_get_lines(fixbuf, 0, -1, false), '\n')
  vim.lsp.buf.code_action({ context = { only = { 'source.fixAll.flydsl-ls' } }, apply = true })
  if not vim.wait(60000, function()
    return table.concat(vim.api.nvim_buf_get_lines(fixbuf, 0, -1, false), '\n') ~= unfixed
  end, 50) then
    return finish(false, 'fix-all did not change the buffer')
  end
  vim.cmd('write')
  note('fix-all')

  -- :FlydslCompile and :FlydslShowIsa (editors/nvim/lsp/flydsl_ls.lua) on a compile example.
  vim.cmd('edit ' .. vim.fn.fnameescape(vim.env.FLYDSL_E2E_COMPILE))
  local cbuf = vim.api.nvim_get_current_buf()
  if not vim.wait(60000, function() return vim.fn.exists(':FlydslCompile') == 2 end, 50) then
    return finish(false, ':FlydslCompile was not defined on attach')
  end
  vim.cmd('FlydslCompile')
  if not vim.wait(200000, function() return vim.b[cbuf].flydsl_result ~= nil end, 100) then
    return finish(false, ':FlydslCompile gave no result')
  end
  local compiled = vim.b[cbuf].flydsl_result
  result.compile = { status = compiled.status, arch = compiled.arch, example = compiled.example, message = compiled.message }
  note('compiled')
  if compiled.status == 'ok' then
    vim.b[cbuf].flydsl_result = nil
    vim.cmd('FlydslShowIsa')
    local isa
    vim.wait(200000, function()
      for _, b in ipairs(vim.api.nvim_list_bufs()) do
        if vim.api.nvim_buf_get_name(b):match('22_final_isa%.s$') and vim.api.nvim_buf_is_loaded(b) then
          isa = b
          return true
        end
      end
      return false
    end, 100)
    if not isa then return finish(false, ':FlydslShowIsa opened no ISA') end
    result.isa = table.concat(vim.api.nvim_buf_get_lines(isa, 0, 40, false), '\n')
    note('isa')
  end
  finish(true, nil)
end

vim.api.nvim_create_autocmd('VimEnter', {
  callback = function()
    vim.schedule(function()
      local ok, err = pcall(run)
      if not ok then finish(false, tostring(err)) end
    end)
  end,
})
