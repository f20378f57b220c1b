"""The texts the Rust encoder is checked on against the wheel (scripts/build_encoder.py).

Written for this check: questions about coding work, agent messages, commands and code, in
English and Russian, short and long, plus the edge cases of the segmenter (empty text, lone
whitespace, control-piece look-alikes, characters outside the vocabulary, full-width forms,
combining accents, a trailing U+2581). None is taken from an evaluation set.
"""

_SHORT_EN = [
    "where did we stop the logs from filling the disk?",
    "who fixed the flaky test in the payment service",
    "how did we speed up the cold start of the CLI",
    "the migration that renamed the users table",
    "why does the build fail on ARM runners",
    "find the session where we added retries to the HTTP client",
    "which commit broke the release pipeline last week",
    "how do I rotate the database credentials",
    "we switched from polling to inotify for the file watcher",
    "the fix for the memory leak in the image resizer",
    "what was the workaround for the TLS handshake timeout",
    "remove the unused feature flags from the config",
    "ok, do it",
    "yes",
    "thanks, that works now",
    "run the tests again",
    "can you explain what this function returns?",
    "the parser chokes on empty lines at the end of the file",
    "add a progress bar to the indexing step",
    "rename the struct and update every call site",
    "the tests pass locally but fail in CI",
    "where is the rate limiter configured",
    "summarise what changed in the search ranking",
    "the query planner ignored the index on created_at",
    "how did we handle Unicode in file names",
    "make the error message say which file was missing",
    "the websocket reconnect loop never backs off",
    "cache the compiled regex instead of building it per call",
    "who wrote the deduplication step for search results",
    "the cron job ran twice at midnight after the DST change",
    "write a test that reproduces the race in the queue",
    "what did the agent do when the disk was full",
    "the npm install kept timing out behind the proxy",
    "profile the slow endpoint and tell me where time goes",
    "where do we store the API keys for staging",
]

_SHORT_RU = [
    "где мы остановили переполнение диска логами?",
    "кто починил нестабильный тест в платёжном сервисе",
    "как мы ускорили холодный старт утилиты",
    "миграция, которая переименовала таблицу пользователей",
    "почему сборка падает на ARM",
    "найди сессию, где добавили повторы в HTTP-клиент",
    "какой коммит сломал релиз на прошлой неделе",
    "как сменить пароль к базе данных",
    "перешли с опроса на inotify для слежения за файлами",
    "исправление утечки памяти в обработке картинок",
    "какой был обходной путь для таймаута TLS",
    "убери неиспользуемые флаги из конфига",
    "ок, делай",
    "да",
    "спасибо, теперь работает",
    "запусти тесты ещё раз",
    "объясни, что возвращает эта функция",
    "парсер падает на пустых строках в конце файла",
    "добавь индикатор прогресса при индексации",
    "переименуй структуру и обнови все вызовы",
    "тесты проходят локально, но падают в CI",
    "где настроен ограничитель частоты запросов",
    "кратко опиши, что изменилось в ранжировании поиска",
    "планировщик запросов не использовал индекс по created_at",
    "как мы обрабатывали юникод в именах файлов",
    "пусть сообщение об ошибке называет отсутствующий файл",
    "вебсокет переподключается без задержки, бесконечно",
    "докер-образ вырос до двух гигабайт, почему?",
    "кто написал удаление дубликатов в результатах поиска",
    "крон запустился дважды в полночь после перевода часов",
    "напиши тест, который воспроизводит гонку в очереди",
    "что сделал агент, когда закончилось место на диске",
    "npm install постоянно отваливался по таймауту за прокси",
    "профилируй медленный эндпоинт и скажи, где уходит время",
    "где мы храним ключи API для стейджинга",
]

_CODE = [
    "fn main() { println!(\"hello\"); }",
    "let mut buf = Vec::with_capacity(n * 512);",
    "impl Drop for Guard { fn drop(&mut self) { self.release(); } }",
    "SELECT id, name FROM users WHERE created_at > now() - interval '7 days';",
    "git rebase -i HEAD~3 && git push --force-with-lease",
    "cargo test --lib encoder -- --nocapture",
    "docker compose up -d postgres redis",
    "kubectl rollout restart deployment/api -n prod",
    "def parse(path: str) -> dict:\n    with open(path) as f:\n        return json.load(f)",
    "const res = await fetch(`/api/v1/items?page=${page}`);",
    "error[E0502]: cannot borrow `self.items` as mutable because it is also borrowed as immutable",
    "thread 'main' panicked at src/index/writer.rs:214:9: called `Option::unwrap()` on a `None` value",
    "Traceback (most recent call last):\n  File \"app.py\", line 12, in <module>\nKeyError: 'user_id'",
    "ECONNREFUSED 127.0.0.1:5432",
    "java.lang.NullPointerException at com.example.OrderService.place(OrderService.java:88)",
    "parseConfig(snake_case_name, HTTPServer, getUserByID)",
    "#include <stdio.h>\nint main(void) { return 0; }",
    "{\"type\": \"tool_use\", \"name\": \"bash\", \"input\": {\"command\": \"ls -la\"}}",
    "https://example.com/docs/install?lang=en#linux",
    "/home/user/projects/knowledge/src/text/encoder/mod.rs",
    "rm -rf target/ && cargo build --release 2>&1 | tail -20",
    "UPDATE orders SET status = 'shipped' WHERE id IN (SELECT order_id FROM shipments);",
    "npm ERR! code ERESOLVE unable to resolve dependency tree",
    "warning: unused variable: `count` --> src/lib.rs:42:9",
    "sed -i 's/old_name/new_name/g' $(git ls-files '*.rs')",
    "x = np.maximum(h, 0); h += xs",
    "match event { Event::Key(k) if k.code == KeyCode::Esc => break, _ => {} }",
    "CREATE INDEX CONCURRENTLY idx_events_session ON events (session_id, seq);",
    "export RUST_LOG=debug,hyper=info",
    "0x7fff5fbff8a0 0xdeadbeef 3.14159 1e-12 42",
]

_MIXED = [
    "почему `cargo build` падает с ошибкой linker `cc` not found?",
    "the тест fails only on Windows",
    "где вызывается parseConfig и кто его менял",
    "как починили panicked at 'index out of bounds' в writer.rs",
    "закоммить это с сообщением \"fix: retry on 503\"",
    "the agent said: \"я не могу найти файл\" and stopped",
    "Почему SELECT * FROM events такой медленный?",
    "добавь `#[derive(Debug, Clone)]` к структуре Config",
    "PR #1234 — исправление гонки в планировщике",
    "kubectl logs показывает OOMKilled, что делать",
]

_EDGE = [
    "",
    " ",
    "\t\n  \n",
    "!!! ??? ...",
    "<s>",
    "</s> and <unk> in a sentence <s>",
    "extra_token_id_1",
    "ёлка Ёжик naïve café",
    "e\u0301te\u0301 na\u0308ive",
    "ｆｕｌｌ－ｗｉｄｔｈ ＡＢＣ １２３",
    "🚀 deployed 🎉 finally ✅",
    "日本語のテキストも少し",
    "中文测试：修复了一个错误",
    "Ελληνικά και עברית و العربية",
    "a",
    "Я",
    "...",
    "a\u2581b trailing mark\u2581",
    "\u200bzero\u200bwidth\u200b",
    "mixed\r\nline\rendings\n",
    "ALL CAPS SHOUTING ABOUT THE BUILD",
    "repeated repeated repeated repeated repeated repeated repeated repeated",
    "супердлинноеслововкотороммногобуквинетпробелов",
    "aVeryLongIdentifierWithoutAnySpacesThatKeepsGoingAndGoingForeverAndEver",
    "\u00a0non-breaking\u00a0spaces\u00a0here",
    "x" * 300,
    "ⅰⅱⅲ ① ﬁ ﬂ ㎏ ㍿",
    "tab\tseparated\tvalues\there",
    "Ｐｒｉｖｅｔ Привет ПРИВЕТ привет",
    "\U0001F600\U0001F600\U0001F600",
]

_MESSAGES_EN = [
    "I found the cause: the watcher registers the same directory twice after a rename, so every "
    "event is delivered twice and the indexer writes each row again. I changed the registration "
    "to use the canonical path and added a test that renames a folder and counts the events.",
    "The build failed because the lockfile pinned an old version of the TLS crate that does not "
    "compile on the new toolchain. I updated it with `cargo update -p rustls`, ran the full test "
    "suite, and everything passes now.",
    "Here is the plan: first, make the lexical index searchable as soon as it is written; second, "
    "embed messages in the background with a progress bar; third, record coverage so `doctor` can "
    "report how many messages have vectors.",
    "I could not reproduce the crash locally. The stack trace points to the connection pool, which "
    "suggests the database closed idle connections. I added a health check before each checkout "
    "and lowered the idle timeout to thirty seconds.",
    "The log rotation was configured for the app logs but not for the access logs, which grew to "
    "40 GB and filled the disk. I added a logrotate rule with daily rotation, compression, and a "
    "retention of seven days, and cleaned up the old files.",
    "Tests are green. I also ran clippy with warnings denied and formatted the changed files. "
    "The commit is ready; tell me if you want me to push it.",
    "The slow query came from an N+1 pattern in the order listing: each order loaded its customer "
    "separately. Joining the customers in the first query brought the endpoint from 1.8 s to 90 ms.",
    "I replaced the hand-written retry loop with exponential backoff and jitter, capped at five "
    "attempts, and made the client give up immediately on 4xx responses except 429.",
    "The migration is reversible: the down step restores the old column name and copies the data "
    "back. I tested both directions against a copy of the staging database.",
    "Done. The CLI now prints the path of the missing file and suggests running `knowledge index`.",
    "I looked at the failing test: it depends on the system time zone. Setting TZ=UTC in the test "
    "harness makes it deterministic, and I documented why in a comment.",
    "The Docker image was large because the build stage copied the whole target directory. A "
    "multi-stage build that copies only the release binary brought it from 2.1 GB to 38 MB.",
    "We stopped the logs from filling the disk by sending debug output to a ring buffer and only "
    "flushing it when an error occurs.",
    "I bisected the regression to the commit that changed the tokenizer: it started lowercasing "
    "identifiers, so exact matches on CamelCase names stopped ranking first.",
    "The websocket client now waits one, two, four and eight seconds between reconnects, and resets "
    "the delay after a connection stays up for a minute.",
]

_MESSAGES_RU = [
    "Нашёл причину: после переименования наблюдатель регистрирует тот же каталог дважды, поэтому "
    "каждое событие приходит два раза и индексатор записывает строку повторно. Теперь регистрация "
    "идёт по каноническому пути, и есть тест, который переименовывает папку и считает события.",
    "Сборка падала, потому что в lock-файле была старая версия TLS-библиотеки, которая не "
    "собирается новым компилятором. Обновил её, прогнал все тесты — всё проходит.",
    "План такой: сначала делаем лексический индекс доступным для поиска сразу после записи, потом "
    "в фоне считаем векторы сообщений с индикатором прогресса, а затем записываем покрытие.",
    "Локально падение не воспроизводится. Стек указывает на пул соединений: похоже, база закрывает "
    "простаивающие соединения. Добавил проверку перед выдачей соединения и уменьшил таймаут.",
    "Ротация была настроена для логов приложения, но не для логов доступа — они выросли до 40 ГБ "
    "и заполнили диск. Добавил правило logrotate: ежедневно, со сжатием, хранить семь дней.",
    "Тесты зелёные. Ещё прогнал clippy с запретом предупреждений и отформатировал изменённые файлы.",
    "Медленный запрос — это N+1 в списке заказов: каждый заказ отдельно загружал покупателя. "
    "После объединения в один запрос эндпоинт ускорился с 1,8 с до 90 мс.",
    "Заменил самописный цикл повторов на экспоненциальную задержку с джиттером, максимум пять "
    "попыток, и клиент сразу сдаётся на ответах 4xx, кроме 429.",
    "Миграция обратимая: шаг отката возвращает старое имя столбца и копирует данные обратно.",
    "Готово. Теперь утилита пишет путь к отсутствующему файлу и предлагает запустить индексацию.",
    "Тест зависел от часового пояса системы. С TZ=UTC в обвязке он стал детерминированным.",
    "Образ был большим, потому что на этапе сборки копировался весь каталог target. Многоэтапная "
    "сборка уменьшила его с 2,1 ГБ до 38 МБ.",
    "Чтобы логи не забивали диск, отладочный вывод теперь пишется в кольцевой буфер и "
    "сбрасывается только при ошибке.",
    "Бисект показал, что регрессию внёс коммит в токенизаторе: он начал приводить идентификаторы "
    "к нижнему регистру, и точные совпадения по CamelCase перестали быть первыми.",
    "Клиент вебсокета теперь ждёт одну, две, четыре и восемь секунд между переподключениями.",
]

_QUESTIONS = [
    "How do we make sure the index survives a kill -9 in the middle of a write?",
    "Is there a way to search old sessions by the error message the tool printed?",
    "What is the difference between the episodes lane and the code lane?",
    "Did anyone already try Tantivy instead of SQLite FTS5 here?",
    "Why are short messages like 'ok' ranked so high for every query?",
    "Can the encoder run on both cores while the lexical index stays searchable?",
    "Which tests need PostgreSQL and which need tmux?",
    "How long does it take to embed two thousand sessions?",
    "What happens when the assets directory is missing?",
    "Should we store vectors as int8 or as binary codes?",
    "Как сделать, чтобы индекс пережил kill -9 посреди записи?",
    "Можно ли искать старые сессии по тексту ошибки из вывода инструмента?",
    "Чем отличается полоса эпизодов от полосы кода?",
    "Кто-нибудь уже пробовал Tantivy вместо SQLite FTS5?",
    "Почему короткие сообщения вроде «ок» всплывают на любой запрос?",
    "Может ли кодировщик работать на двух ядрах, пока лексический индекс доступен?",
    "Каким тестам нужен PostgreSQL, а каким tmux?",
    "Сколько времени займёт векторизация двух тысяч сессий?",
    "Что будет, если каталога с ресурсами нет?",
    "Хранить векторы в int8 или в виде двоичных кодов?",
]


def _long_texts() -> list[str]:
    """Long texts: several messages joined, so the forward pass crosses its token blocks."""
    en = " ".join(_MESSAGES_EN)
    ru = " ".join(_MESSAGES_RU)
    log = "\n".join(
        f"2026-12-0{d} 12:{m:02d}:07 WARN disk usage at {70 + m}% on /var/log, rotating app.log"
        for d in range(1, 4)
        for m in range(0, 20, 3)
    )
    code = "\n".join(_CODE[:12])
    return [
        en,
        ru,
        en + "\n\n" + ru,
        log,
        code,
        (ru + " ") * 3,
        "\n".join(_QUESTIONS),
        " ".join(_SHORT_EN) + " " + " ".join(_SHORT_RU),
        "word " * 700,
        ". ".join(_MIXED) * 2,
    ]


TEXTS = (
    _SHORT_EN
    + _SHORT_RU
    + _CODE
    + _MIXED
    + _EDGE
    + _MESSAGES_EN
    + _MESSAGES_RU
    + _QUESTIONS
    + _long_texts()
)
