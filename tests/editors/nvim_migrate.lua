-- Headless Neovim 0.11 check of "Migrate this kernel", run by test_neovim_migrate.py:
--   nvim --clean --headless -u nvim_migrate.lua
-- Starts flydsl-ls through editors/nvim/lsp/flydsl_ls.lua; in $FLYDSL_E2E_LENS runs the
-- "Migrate this kernel" lens on softmax_kernel (vim.lsp.codelens.run() on its line) and
-- writes; in $FLYDSL_E2E_CURSOR runs the shipped :FlydslMigrate with the cursor inside
-- softmax_kernel (the refactor.rewrite code action, applied) and writes; in $FLYDSL_E2E_NAMED
-- runs `:FlydslMigrate softmax_kernel` and writes. Reports as JSON in $FLYDSL_E2E_RESULT.
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
vim.lsp.log.set_level('info')
vim.cmd('filetype on')
vim.lsp.config('flydsl_ls', { cmd = { vim.env.FLYDSL_E2E_PYTHON, '-m', 'flydsl_ls', 'serve' } })
vim.lsp.enable('flydsl_ls')

local function text(bufnr) return table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), '\n') end

--- Open `path`, wait for its diagnostics and the shipped commands.
local function open(path)
  vim.cmd('edit ' .. vim.fn.fnameescape(path))
  local bufnr = vim.api.nvim_get_current_buf()
  if not vim.wait(60000, function() return #vim.diagnostic.get(bufnr) > 0 and vim.fn.exists(':FlydslMigrate') == 2 end, 50) then
    return nil
  end
  return bufnr
end

--- Wait for the buffer to change from `before`, then :write.
local function changed(bufnr, before, what)
  if not vim.wait(120000, function() return text(bufnr) ~= before end, 50) then
    finish(false, what .. ' did not change the buffer')
    return false
  end
  vim.cmd('write')
  return true
end

local function line_of(bufnr, wanted)
  for i, line in ipairs(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)) do
    if line == wanted then return i end
  end
end

local function run()
  -- the lens
  local lbuf = open(vim.env.FLYDSL_E2E_LENS)
  if not lbuf then return finish(false, 'no diagnostics in the lens file') end
  local lenses
  vim.wait(60000, function()
    vim.lsp.codelens.refresh({ bufnr = lbuf })
    lenses = {}
    for _, lens in ipairs(vim.lsp.codelens.get(lbuf)) do
      if lens.command and lens.command.title == 'Migrate this kernel' then
        table.insert(lenses, lens.range.start.line)
      end
    end
    table.sort(lenses)
    return #lenses > 0
  end, 200)
  result.lenses = lenses
  if #lenses == 0 then return finish(false, 'no "Migrate this kernel" lens') end
  local before = text(lbuf)
  vim.api.nvim_win_set_cursor(0, { lenses[1] + 1, 0 })
  -- The line has two lenses (its findings counted, then the migration): codelens.run()
  -- asks which one through vim.ui.select, which a user answers; here, the migration.
  local select = vim.ui.select
  vim.ui.select = function(items, opts, on_choice)
    for i, item in ipairs(items) do
      local title = opts and opts.format_item and opts.format_item(item) or tostring(item)
      if title:find('Migrate this kernel', 1, true) then return on_choice(item, i) end
    end
    on_choice(nil, nil)
  end
  vim.lsp.codelens.run()
  vim.ui.select = select
  if not changed(lbuf, before, 'the lens') then return end
  note('lens')

  -- :FlydslMigrate, the cursor inside the kernel
  local cbuf = open(vim.env.FLYDSL_E2E_CURSOR)
  if not cbuf then return finish(false, 'no diagnostics in the cursor file') end
  before = text(cbuf)
  vim.api.nvim_win_set_cursor(0, { line_of(cbuf, '    lane, warp = _lane_and_warp()'), 4 })
  vim.cmd('FlydslMigrate')
  if not changed(cbuf, before, ':FlydslMigrate') then return end
  note('cursor')

  -- :FlydslMigrate NAME
  local nbuf = open(vim.env.FLYDSL_E2E_NAMED)
  if not nbuf then return finish(false, 'no diagnostics in the named file') end
  before = text(nbuf)
  vim.cmd('FlydslMigrate softmax_kernel')
  if not changed(nbuf, before, ':FlydslMigrate softmax_kernel') then return end
  if not vim.wait(30000, function() return vim.b[nbuf].flydsl_result ~= nil end, 50) then
    return finish(false, ':FlydslMigrate NAME kept no result')
  end
  local named = vim.b[nbuf].flydsl_result
  result.named = { applied = named.applied, verified = named.verified, findings = named.findings }
  note('named')
  finish(true)
end

vim.api.nvim_create_autocmd('VimEnter', {
  callback = function()
    vim.schedule(function()
      local ok, err = pcall(run)
      if not ok then finish(false, tostring(err)) end
    end)
  end,
})
