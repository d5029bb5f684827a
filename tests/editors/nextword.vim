" nextword as predictive text in Vim 9 with no plugin (vimrc): one server for
" every prose buffer through Vim's LSP channel mode, completion with Ctrl-X Ctrl-O.
let s:cmd = ['nextword', 'lsp']
let s:versions = {}  " buffer number: the changedtick the server has
let g:nextword_stderr = []  " the server's last log lines

function! s:Start() abort
  if exists('s:job') && job_status(s:job) ==# 'run'
    return
  endif
  let s:versions = {}
  let s:job = job_start(s:cmd, #{in_mode: 'lsp', out_mode: 'lsp', err_mode: 'nl',
        \ out_cb: {channel, message -> 0},
        \ err_cb: function('s:Log')})
  call ch_evalexpr(s:job, #{method: 'initialize', params: #{processId: getpid(),
        \ rootUri: v:null, capabilities: {}}}, #{timeout: 5000})
  call ch_sendexpr(s:job, #{method: 'initialized', params: {}})
endfunction

function! s:Log(channel, line) abort
  let g:nextword_stderr = (g:nextword_stderr + [a:line])[-20:]
endfunction

function! s:Uri(buf) abort
  return 'file://' .. fnamemodify(bufname(a:buf), ':p')
endfunction

" Sends the buffer's whole text when it changed since the server last had it.
function! s:Sync(buf) abort
  let tick = getbufvar(a:buf, 'changedtick')
  if get(s:versions, a:buf, -1) == tick
    return
  endif
  let doc = #{uri: s:Uri(a:buf), version: tick}
  let text = join(getbufline(a:buf, 1, '$'), "\n") .. "\n"
  if has_key(s:versions, a:buf)
    call ch_sendexpr(s:job, #{method: 'textDocument/didChange',
          \ params: #{textDocument: doc, contentChanges: [#{text: text}]}})
  else
    call ch_sendexpr(s:job, #{method: 'textDocument/didOpen', params: #{textDocument:
          \ extend(doc, #{languageId: getbufvar(a:buf, '&filetype'), text: text})}})
  endif
  let s:versions[a:buf] = tick
endfunction

" Positions count UTF-16 units: a character above U+FFFF counts two.
function! s:Units(text) abort
  return strchars(a:text) + len(filter(str2list(a:text), 'v:val > 0xFFFF'))
endfunction

function! s:Bytes(text, units) abort
  let [bytes, units] = [0, 0]
  for c in str2list(a:text)
    if units >= a:units
      break
    endif
    let units += c > 0xFFFF ? 2 : 1
    let bytes += len(list2str([c]))
  endfor
  return bytes
endfunction

function! NextwordComplete(findstart, base) abort
  if !a:findstart
    return map(copy(s:items), {_, item -> #{word: item.textEdit.newText, abbr: item.label,
          \ menu: get(item, 'detail', ''), dup: 1}})
  endif
  call s:Sync(bufnr())
  let before = strpart(getline('.'), 0, col('.') - 1)
  let answer = ch_evalexpr(s:job, #{method: 'textDocument/completion', params: #{
        \ textDocument: #{uri: s:Uri(bufnr())},
        \ position: #{line: line('.') - 1, character: s:Units(before)}}}, #{timeout: 2000})
  let result = get(answer, 'result', v:null)
  let s:items = filter(type(result) == v:t_dict ? get(result, 'items', []) : [],
        \ {_, item -> has_key(item, 'textEdit')})
  if empty(s:items)
    return -3  " nothing to offer: leave completion quietly
  endif
  return s:Bytes(before, s:items[0].textEdit.range.start.character)
endfunction

" The saved text goes to the server (nextword lsp --history learns from it).
function! s:Saved(buf) abort
  if has_key(s:versions, a:buf) && job_status(s:job) ==# 'run'
    call s:Sync(a:buf)
    call ch_sendexpr(s:job, #{method: 'textDocument/didSave',
          \ params: #{textDocument: #{uri: s:Uri(a:buf)}}})
  endif
endfunction

augroup nextword
  autocmd!
  autocmd FileType markdown,text,gitcommit,mail call s:Start()
        \ | call s:Sync(str2nr(expand('<abuf>')))
        \ | setlocal omnifunc=NextwordComplete
  autocmd BufWritePost * call s:Saved(str2nr(expand('<abuf>')))
augroup END
