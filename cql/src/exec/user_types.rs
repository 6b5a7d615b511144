//! CREATE, ALTER and DROP TYPE: a keyspace's user-defined types, with 3.11's checks and
//! messages (`CreateTypeStatement`, `AlterTypeStatement`, `DropTypeStatement`).
//!
//! A table's columns carry the types they use whole in their type strings, so ALTER TYPE
//! rewrites every table of the keyspace that uses the type in the same schema change.

use model::marshal::{AbstractType, UserType};
use model::schema::{is_reserved_keyspace, CfDef, KeyspaceDef, UserTypeDef};

use super::{invalid, Context, CqlError, Outcome, SchemaChange};
use crate::ast::{AlterType, AlterTypeAction, CqlType, CreateType, DropObject, QualifiedName};
use crate::schema::{storage_type, TypeScope};

fn type_change(change: &'static str, keyspace: &str, name: &str) -> Outcome {
    Outcome::SchemaChange(SchemaChange {
        change,
        target: "TYPE",
        keyspace: keyspace.to_string(),
        name: Some(name.to_string()),
    })
}

/// The keyspace a type statement is about, existing and modifiable.
fn keyspace(ctx: &Context<'_>, name: &QualifiedName, missing: &str) -> Result<KeyspaceDef, CqlError> {
    let keyspace = ctx.keyspace_of(name)?;
    if is_reserved_keyspace(&keyspace) {
        return invalid(format!("{keyspace} keyspace is not user-modifiable"));
    }
    ctx.coordinator.keyspace(&keyspace).ok_or_else(|| CqlError::Invalid(format!("{missing} {keyspace}")))
}

/// A field's type, checked as 3.11 checks a user type's fields.
fn field_type(ty: &CqlType, ks: &KeyspaceDef) -> Result<AbstractType, CqlError> {
    let scope = TypeScope { keyspace: &ks.name, types: &ks.user_types };
    let t = storage_type(ty, &scope)?;
    if t.is_counter() {
        return invalid("A user type cannot contain counters");
    }
    if matches!(&t, AbstractType::User(u) if !u.frozen) {
        return invalid("A user type cannot contain non-frozen UDTs");
    }
    Ok(t)
}

pub(super) async fn create_type(ctx: &Context<'_>, s: &CreateType) -> Result<Outcome, CqlError> {
    let ks = keyspace(ctx, &s.name, "Cannot add type in unknown keyspace")?;
    let name = s.name.name.name();
    if ks.user_type(name).is_some() {
        if s.if_not_exists {
            return Ok(Outcome::Void);
        }
        return invalid(format!("A user type of name {}.{name} already exists", ks.name));
    }
    let mut def = UserTypeDef { name: name.to_string(), field_names: Vec::new(), field_types: Vec::new() };
    for (field, ty) in &s.fields {
        if def.field_names.iter().any(|f| f == field.name()) {
            return invalid(format!("Duplicate field name {} in type {name}", field.name()));
        }
        def.field_names.push(field.name().to_string());
        def.field_types.push(field_type(ty, &ks)?.class_name());
    }
    let mut types = ks.user_types.clone();
    types.push(def);
    ctx.coordinator.update_user_types(&ks.name, types, Vec::new()).await?;
    Ok(type_change("CREATED", &ks.name, name))
}

pub(super) async fn alter_type(ctx: &Context<'_>, s: &AlterType) -> Result<Outcome, CqlError> {
    let ks = keyspace(ctx, &s.name, "Cannot alter type in unknown keyspace")?;
    let name = s.name.name.name();
    let Some(old) = ks.user_type(name) else {
        return invalid(format!("No user type named {}.{name} exists.", ks.name));
    };
    let mut def = old.clone();
    match &s.action {
        AlterTypeAction::AlterField(..) => return invalid("Altering field types is no longer supported"),
        AlterTypeAction::Add(field, ty) => {
            let f = field.name();
            if def.field_names.iter().any(|n| n == f) {
                return invalid(format!(
                    "Cannot add new field {f} to type {}.{name}: a field of the same name already exists",
                    ks.name
                ));
            }
            let t = field_type(ty, &ks)?;
            if t.references_user_type(&ks.name, name) {
                return invalid(format!(
                    "Cannot add new field {f} of type {ty} to type {}.{name} as this would create a circular reference",
                    ks.name
                ));
            }
            def.field_names.push(f.to_string());
            def.field_types.push(t.class_name());
        }
        AlterTypeAction::Rename(pairs) => {
            for (from, to) in pairs {
                let Some(i) = def.field_names.iter().position(|n| n == from.name()) else {
                    return invalid(format!("Unknown field {} in type {}.{name}", from.name(), ks.name));
                };
                def.field_names[i] = to.name().to_string();
            }
            let mut seen = std::collections::HashSet::new();
            if let Some(dup) = def.field_names.iter().find(|n| !seen.insert(n.as_str())) {
                return invalid(format!("Duplicate field name {dup} in type {}.{name}", ks.name));
            }
        }
    }
    let new = user_type(&ks.name, &def)?;
    let mut types: Vec<UserTypeDef> = Vec::with_capacity(ks.user_types.len());
    for t in &ks.user_types {
        types.push(if t.name == name { def.clone() } else { rewrite_type_def(t, &new)? });
    }
    let mut tables = Vec::new();
    for cf in &ks.cf_defs {
        if let Some(rewritten) = rewrite_table(cf, &new)? {
            tables.push(rewritten);
        }
    }
    ctx.coordinator.update_user_types(&ks.name, types, tables).await?;
    Ok(type_change("UPDATED", &ks.name, name))
}

pub(super) async fn drop_type(ctx: &Context<'_>, s: &DropObject) -> Result<Outcome, CqlError> {
    let ks = keyspace(ctx, &s.name, "Cannot drop type in unknown keyspace")?;
    let name = s.name.name.name();
    if ks.user_type(name).is_none() {
        if s.if_exists {
            return Ok(Outcome::Void);
        }
        return invalid(format!("No user type named {}.{name} exists.", ks.name));
    }
    for t in ks.user_types.iter().filter(|t| t.name != name) {
        if AbstractType::User(Box::new(user_type(&ks.name, t)?)).references_user_type(&ks.name, name) {
            return invalid(format!(
                "Cannot drop user type {}.{name} as it is still used by user type {}",
                ks.name, t.name
            ));
        }
    }
    for cf in &ks.cf_defs {
        if types_of(cf).iter().any(|class| parse(class).is_ok_and(|t| t.references_user_type(&ks.name, name))) {
            return invalid(format!(
                "Cannot drop user type {}.{name} as it is still used by table {}.{}",
                ks.name, ks.name, cf.name
            ));
        }
    }
    let types = ks.user_types.iter().filter(|t| t.name != name).cloned().collect();
    ctx.coordinator.update_user_types(&ks.name, types, Vec::new()).await?;
    Ok(type_change("DROPPED", &ks.name, name))
}

fn parse(class: &str) -> Result<AbstractType, CqlError> {
    AbstractType::parse(class).map_err(|e| CqlError::Invalid(e.to_string()))
}

fn user_type(keyspace: &str, def: &UserTypeDef) -> Result<UserType, CqlError> {
    match def.to_type(keyspace, false) {
        Ok(AbstractType::User(u)) => Ok(*u),
        Ok(_) => invalid(format!("type {} is not a user type", def.name)),
        Err(e) => invalid(e.to_string()),
    }
}

fn rewrite_type_def(def: &UserTypeDef, new: &UserType) -> Result<UserTypeDef, CqlError> {
    let mut out = def.clone();
    for class in &mut out.field_types {
        *class = parse(class)?.with_updated_user_type(new).class_name();
    }
    Ok(out)
}

/// The type strings of a column family that may name a user type.
fn types_of(cf: &CfDef) -> Vec<&str> {
    let mut out =
        vec![cf.key_validation_class.as_str(), cf.comparator_type.as_str(), cf.default_validation_class.as_str()];
    out.extend(cf.column_metadata.iter().map(|c| c.validation_class.as_str()));
    out
}

/// `cf` with user type `new` updated in its type strings, or `None` if it does not use it.
/// The cell comparator cannot change while a column family lives, so a type in a clustering
/// column (or a non-frozen one, named in the comparator) cannot be altered yet.
fn rewrite_table(cf: &CfDef, new: &UserType) -> Result<Option<CfDef>, CqlError> {
    let uses = |class: &str| parse(class).is_ok_and(|t| t.references_user_type(&new.keyspace, &new.name_str()));
    if !types_of(cf).into_iter().any(uses) {
        return Ok(None);
    }
    if uses(&cf.comparator_type) {
        return invalid(format!(
            "altering type {} used in a clustering column or as a non-frozen column of table {} is not supported yet",
            new.name_str(),
            cf.name
        ));
    }
    let mut out = cf.clone();
    let update = |class: &mut String| -> Result<(), CqlError> {
        if uses(class) {
            *class = parse(class)?.with_updated_user_type(new).class_name();
        }
        Ok(())
    };
    update(&mut out.key_validation_class)?;
    update(&mut out.default_validation_class)?;
    for c in &mut out.column_metadata {
        update(&mut c.validation_class)?;
    }
    Ok(Some(out))
}
