// Where a document is prose, so that suggesting words helps: not inside
// Markdown's code (fenced blocks, inline code spans) or a URL being typed,
// and not in a commit message's comment lines.
#pragma once

#include <string_view>

namespace nextword::lsp {

// Whether the cursor at the end of `before` (a document's text before the
// cursor) is in prose, for a document of `language` (an LSP languageId).
bool in_prose(std::string_view before, std::string_view language);

}  // namespace nextword::lsp
