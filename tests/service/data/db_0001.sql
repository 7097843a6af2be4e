-- A SQLite database as assay's released revision 0001 left it (presets inserted by the migration,
-- the regex preset as an older release seeded it, no similarity preset yet, one user), dumped with
-- sqlite3's iterdump.
BEGIN TRANSACTION;
CREATE TABLE alembic_version (
	version_num VARCHAR(32) NOT NULL, 
	CONSTRAINT alembic_version_pkc PRIMARY KEY (version_num)
);
INSERT INTO "alembic_version" VALUES('0001');
CREATE TABLE api_tokens (
	id VARCHAR(36) NOT NULL, 
	user_id VARCHAR(36) NOT NULL, 
	name VARCHAR(200) NOT NULL, 
	token_hash VARCHAR(64) NOT NULL, 
	prefix VARCHAR(16) NOT NULL, 
	created_at DATETIME NOT NULL, 
	revoked_at DATETIME, 
	PRIMARY KEY (id), 
	FOREIGN KEY(user_id) REFERENCES users (id) ON DELETE CASCADE, 
	UNIQUE (token_hash)
);
CREATE TABLE evaluation_results (
	id INTEGER NOT NULL, 
	run_id VARCHAR(36) NOT NULL, 
	sample_id VARCHAR(300) NOT NULL, 
	sample_index INTEGER NOT NULL, 
	evaluator_id VARCHAR(36) NOT NULL, 
	evaluator_name VARCHAR(200) NOT NULL, 
	status VARCHAR(16) NOT NULL, 
	passed BOOLEAN NOT NULL, 
	score FLOAT, 
	reason TEXT, 
	details JSON NOT NULL, 
	error_code VARCHAR(32), 
	latency_ms FLOAT NOT NULL, 
	created_at DATETIME NOT NULL, 
	PRIMARY KEY (id), 
	CONSTRAINT uq_result_run_sample_evaluator UNIQUE (run_id, sample_id, evaluator_id), 
	FOREIGN KEY(run_id) REFERENCES runs (id) ON DELETE CASCADE, 
	FOREIGN KEY(evaluator_id) REFERENCES evaluators (id) ON DELETE RESTRICT
);
CREATE TABLE evaluators (
	id VARCHAR(36) NOT NULL, 
	name VARCHAR(200) NOT NULL, 
	description TEXT, 
	type VARCHAR(16) NOT NULL, 
	config JSON NOT NULL, 
	is_preset BOOLEAN NOT NULL, 
	created_by_id VARCHAR(36), 
	created_at DATETIME NOT NULL, 
	updated_at DATETIME NOT NULL, 
	PRIMARY KEY (id), 
	FOREIGN KEY(created_by_id) REFERENCES users (id) ON DELETE SET NULL
);
INSERT INTO "evaluators" VALUES('0927dcd5-fe55-5ade-9ee2-7cab80717778','精确匹配','输出与期望完全一致','preset','{"presetType": "exact_match", "params": {}}',1,NULL,'2026-11-26 21:53:50.502895','2026-11-26 21:53:50.502895');
INSERT INTO "evaluators" VALUES('4a4cc706-ab22-5f82-b301-d93135a9f06f','包含匹配','输出包含期望内容','preset','{"presetType": "contains", "params": {}}',1,NULL,'2026-11-26 21:53:50.502896','2026-11-26 21:53:50.502896');
INSERT INTO "evaluators" VALUES('3504e9fd-9c1e-5b85-9436-946c72204d6a','正则匹配','输出匹配正则表达式','preset','{"presetType": "regex", "params": {"pattern": "", "flags": ""}}',1,NULL,'2026-11-26 21:53:50.502897','2026-11-26 21:53:50.502897');
INSERT INTO "evaluators" VALUES('d063d0f6-532e-5aad-b2e3-a975e5c0165b','JSON Schema','输出符合 JSON Schema','preset','{"presetType": "json_schema", "params": {"schema": {}}}',1,NULL,'2026-11-26 21:53:50.502898','2026-11-26 21:53:50.502898');
CREATE TABLE runs (
	id VARCHAR(36) NOT NULL, 
	task_id VARCHAR(36) NOT NULL, 
	status VARCHAR(16) NOT NULL, 
	evaluators JSON NOT NULL, 
	total INTEGER NOT NULL, 
	done INTEGER NOT NULL, 
	summary JSON, 
	error TEXT, 
	created_by_id VARCHAR(36), 
	created_at DATETIME NOT NULL, 
	started_at DATETIME, 
	finished_at DATETIME, 
	PRIMARY KEY (id), 
	FOREIGN KEY(task_id) REFERENCES tasks (id) ON DELETE CASCADE, 
	FOREIGN KEY(created_by_id) REFERENCES users (id) ON DELETE SET NULL
);
CREATE TABLE task_evaluators (
	task_id VARCHAR(36) NOT NULL, 
	evaluator_id VARCHAR(36) NOT NULL, 
	weight FLOAT NOT NULL, 
	position INTEGER NOT NULL, 
	PRIMARY KEY (task_id, evaluator_id), 
	FOREIGN KEY(task_id) REFERENCES tasks (id) ON DELETE CASCADE, 
	FOREIGN KEY(evaluator_id) REFERENCES evaluators (id) ON DELETE RESTRICT
);
CREATE TABLE tasks (
	id VARCHAR(36) NOT NULL, 
	name VARCHAR(200) NOT NULL, 
	description TEXT, 
	dataset_name VARCHAR(300), 
	dataset JSON NOT NULL, 
	created_by_id VARCHAR(36), 
	created_at DATETIME NOT NULL, 
	updated_at DATETIME NOT NULL, 
	PRIMARY KEY (id), 
	FOREIGN KEY(created_by_id) REFERENCES users (id) ON DELETE SET NULL
);
CREATE TABLE users (
	id VARCHAR(36) NOT NULL, 
	name VARCHAR(200) NOT NULL, 
	is_admin BOOLEAN NOT NULL, 
	created_at DATETIME NOT NULL, 
	PRIMARY KEY (id), 
	UNIQUE (name)
);
INSERT INTO "users" VALUES('bb42f0a9-3e50-4777-9a05-144082e38d38','alice',1,'2026-11-26 21:53:50.614278');
CREATE INDEX ix_api_tokens_user_id ON api_tokens (user_id);
CREATE INDEX ix_evaluators_type ON evaluators (type);
CREATE INDEX ix_task_evaluators_evaluator_id ON task_evaluators (evaluator_id);
CREATE INDEX ix_runs_task_id ON runs (task_id);
CREATE INDEX ix_runs_status ON runs (status);
CREATE INDEX ix_results_run_status ON evaluation_results (run_id, status);
CREATE INDEX ix_results_run_evaluator ON evaluation_results (run_id, evaluator_id);
COMMIT;
